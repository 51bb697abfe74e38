import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Mirror } from '../../examples/sync-client/mirror.js'

const shift = (id: number, updatedAt: string, status = 'scheduled') => ({
  id,
  employee_id: 3,
  project_id: null,
  status,
  starts_at: '2026-03-02T07:00:00.000Z',
  ends_at: '2026-03-02T15:00:00.000Z',
  break_minutes: 30,
  created_at: '2026-01-05T08:00:00.000Z',
  updated_at: updatedAt,
})

describe('the SQLite mirror', () => {
  let directory: string
  let mirror: Mirror | undefined

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'sync-mirror-'))
  })
  afterEach(() => {
    mirror?.close()
    mirror = undefined
    rmSync(directory, { recursive: true, force: true })
  })

  /** Every row of the table, byte for byte, read past the class. */
  const rawRows = (table: string) => {
    const db = new Database(join(directory, 'mirror.db'), { readonly: true })
    try {
      return db.prepare(`SELECT id, updated_at, record FROM "${table}" ORDER BY id`).all()
    } finally {
      db.close()
    }
  }

  it('applying the same page twice changes nothing', () => {
    mirror = Mirror.open(join(directory, 'mirror.db'))
    const page = [shift(1, '2026-01-05T08:00:00.000Z'), shift(2, '2026-01-06T08:00:00.000Z'), shift(7, '2026-01-07T08:00:00.000Z')]

    expect(mirror.apply('shifts', page)).toBe(3)
    const once = rawRows('shifts')
    expect(mirror.apply('shifts', page)).toBe(0)
    expect(rawRows('shifts')).toEqual(once)
    expect(mirror.records('shifts')).toEqual(page)
    expect(once.map((row) => (row as { record: string }).record)).toEqual(page.map((record) => JSON.stringify(record)))
  })

  it('keeps the newer copy of a record: an older one arriving later is ignored, a newer one replaces it', () => {
    mirror = Mirror.open(join(directory, 'mirror.db'))
    const newer = shift(4, '2026-06-01T09:00:00.000Z', 'cancelled')
    const older = shift(4, '2026-06-01T08:59:59.999Z', 'confirmed')
    mirror.apply('shifts', [newer])

    expect(mirror.apply('shifts', [older])).toBe(0)
    expect(mirror.records('shifts')).toEqual([newer])

    const newest = shift(4, '2026-06-01T09:00:00.001Z', 'completed')
    expect(mirror.apply('shifts', [newest])).toBe(1)
    expect(mirror.records('shifts')).toEqual([newest])
  })

  it('a keyset page replaces the rows of the id range it covers: missing ones are removed, rows outside it kept', () => {
    mirror = Mirror.open(join(directory, 'mirror.db'))
    mirror.apply('shifts', [1, 2, 3, 5, 8, 9].map((id) => shift(id, '2026-01-05T08:00:00.000Z')))

    // Ids above 1 up to 5: the API listed 2 and 5, so 3 is gone.
    expect(mirror.applyListPage('shifts', [shift(2, '2026-01-05T08:00:00.000Z'), shift(5, '2026-01-05T08:00:00.000Z')], 1, 5)).toEqual({ changed: 0, removed: 1 })
    expect(mirror.ids('shifts')).toEqual([1, 2, 5, 8, 9])
    // The last page: everything above 5 is what it holds.
    expect(mirror.applyListPage('shifts', [shift(9, '2026-02-01T08:00:00.000Z'), shift(12, '2026-02-01T08:00:00.000Z')], 5, null)).toEqual({ changed: 2, removed: 1 })
    expect(mirror.ids('shifts')).toEqual([1, 2, 5, 9, 12])
  })

  it('applies events in order, a deletion by data.id; applying the same page again changes nothing', () => {
    mirror = Mirror.open(join(directory, 'mirror.db'))
    mirror.apply('shifts', [shift(1, '2026-01-05T08:00:00.000Z'), shift(2, '2026-01-05T08:00:00.000Z')])
    const event = (type: string, data: object) => ({ id: `evt_${type}`, type, created_at: '2026-06-01T09:00:00.000Z', company_id: 1, data: data as Record<string, unknown> })
    const page = [
      event('shifts.updated', shift(1, '2026-06-01T09:00:00.000Z', 'cancelled')),
      event('shifts.created', shift(3, '2026-06-01T09:00:00.000Z')),
      event('shifts.deleted', shift(2, '2026-01-05T08:00:00.000Z')),
      event('shifts.deleted', shift(3, '2026-06-01T09:00:00.000Z')),
      event('teams.created', { id: 1, updated_at: '2026-06-01T09:00:00.000Z' }),
    ]

    expect(mirror.applyEvents(page)).toEqual(new Map([['shifts', { changed: 2, removed: 2 }]]))
    const once = rawRows('shifts')
    expect(once.map((row) => (row as { id: number }).id)).toEqual([1])
    expect(mirror.applyEvents(page)).toEqual(new Map([['shifts', { changed: 1, removed: 1 }]]))
    expect(rawRows('shifts')).toEqual(once)
  })

  it('keeps one answer per question across reopening, replaced by the next, and forgets all but the questions named', () => {
    mirror = Mirror.open(join(directory, 'mirror.db'))
    expect(mirror.keptAnswer('/v1/company')).toBeNull()
    mirror.keepAnswer('/v1/company', { etag: '"a"', body: '{"data":{"id":1}}' })
    mirror.keepAnswer('/v1/roles?starting_after=0&per_page=100', { etag: '"r"', body: '{"data":[]}' })
    mirror.keepAnswer('/v1/company', { etag: '"b"', body: '{"data":{"id":1,"name":"x"}}' })
    mirror.close()

    mirror = Mirror.open(join(directory, 'mirror.db'))
    expect(mirror.keptAnswer('/v1/company')).toEqual({ etag: '"b"', body: '{"data":{"id":1,"name":"x"}}' })
    expect(mirror.keptQuestions()).toEqual(['/v1/company', '/v1/roles?starting_after=0&per_page=100'])
    mirror.keepOnlyAnswers(['/v1/roles?starting_after=0&per_page=100', '/v1/never-kept'])
    expect(mirror.keptQuestions()).toEqual(['/v1/roles?starting_after=0&per_page=100'])
    mirror.forgetAnswer('/v1/roles?starting_after=0&per_page=100')
    expect(mirror.keptQuestions()).toEqual([])
  })

  it('keeps resources apart, and its rows, cursor and full-read progress across reopening', () => {
    mirror = Mirror.open(join(directory, 'mirror.db'))
    expect(mirror.feedState()).toBeNull()
    mirror.beginFullSync('ec1_a', ['company', 'shifts', 'absences'], ['shifts', 'absences'])
    mirror.applyListPage('shifts', [shift(1, '2026-01-05T08:00:00.000Z')], 0, 1)
    mirror.close()

    mirror = Mirror.open(join(directory, 'mirror.db'))
    expect(mirror.ids('shifts')).toEqual([1])
    expect(mirror.ids('absences')).toEqual([])
    expect(mirror.feedState()).toEqual({ cursor: 'ec1_a', resources: ['company', 'shifts', 'absences'], listed: false })
    expect(mirror.walkPosition('shifts')).toBe(1)
    expect(mirror.walkPosition('absences')).toBe(0)
    mirror.applyListPage('shifts', [], 1, null)
    expect(mirror.walkPosition('shifts')).toBeNull()
    mirror.completeFullSync()
    mirror.saveCursor('ec1_b')
    expect(mirror.feedState()).toEqual({ cursor: 'ec1_b', resources: ['company', 'shifts', 'absences'], listed: true })
    expect(mirror.walkPosition('absences')).toBeNull()
  })
})
