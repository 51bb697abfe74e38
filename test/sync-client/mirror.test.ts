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

  it('keeps resources apart, and its rows and sync state across reopening', () => {
    mirror = Mirror.open(join(directory, 'mirror.db'))
    mirror.apply('shifts', [shift(1, '2026-01-05T08:00:00.000Z')])
    mirror.completeSync('shifts', { startedAt: '2026-06-01T09:00:00.000Z', finishedAt: '2026-06-01T09:00:01.000Z', mode: 'full' })
    mirror.close()

    mirror = Mirror.open(join(directory, 'mirror.db'))
    expect(mirror.ids('shifts')).toEqual([1])
    expect(mirror.ids('absences')).toEqual([])
    expect(mirror.syncState('shifts')).toEqual({ startedAt: '2026-06-01T09:00:00.000Z', finishedAt: '2026-06-01T09:00:01.000Z', mode: 'full' })
    expect(mirror.syncState('absences')).toBeNull()
    expect(mirror.remove('shifts', [1, 99])).toBe(1)
    expect(mirror.ids('shifts')).toEqual([])
  })
})
