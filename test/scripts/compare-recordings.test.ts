import { describe, expect, it } from 'vitest'
import { compareRecordings, diffOf, formatComparison, maskOf, parseAllow, type Json, type Recorded } from '../../scripts/compare-recordings.js'

const FILE = 'test/admin/admin-api.test.ts'

/** A created key as the admin API answers it: its id, secret and instant are fresh on every run. */
function created(id: string, at: string, overrides: Partial<Recorded> = {}): Recorded {
  return {
    file: FILE,
    test: 'keys > creates a key',
    seq: 0,
    method: 'POST',
    url: '/settings/integrations/api/keys',
    status: 201,
    headers: { 'content-type': 'application/json; charset=utf-8', date: at, 'x-content-type-options': 'nosniff' },
    body: { key: `owk_${id}_secret`, data: { key_id: id, name: 'CRM', scopes: ['users:read'], created_at: at } },
    ...overrides,
  }
}

/** The same key read back by id: the id sits in the URL. */
function read(id: string, seq = 1, overrides: Partial<Recorded> = {}): Recorded {
  return {
    file: FILE,
    test: 'keys > creates a key',
    seq,
    method: 'GET',
    url: `/settings/integrations/api/keys/${id}?expand=usage`,
    status: 200,
    headers: { etag: '"v1"' },
    body: { data: { key_id: id, name: 'CRM' } },
    ...overrides,
  }
}

const beforeA = [created('aaaa', 'Mon, 01'), read('aaaa')]
const beforeB = [created('bbbb', 'Tue, 02'), read('bbbb')]

describe('maskOf', () => {
  it('masks each leaf that differs, and a whole array whose length differs', () => {
    const a: Json = { id: 'x', same: 1, list: [1, 2], nested: [{ at: 't1', keep: true }] }
    const b: Json = { id: 'y', same: 1, list: [1, 2, 3], nested: [{ at: 't2', keep: true }] }
    expect([...maskOf(a, b)].sort()).toEqual(['id', 'list', 'nested[0].at'])
  })

  it('masks a key present in one value only, and quotes a key that is not a plain name', () => {
    expect([...maskOf({ 'a.b': 1, only: 2 }, { 'a.b': 3 })].sort()).toEqual(['["a.b"]', 'only'])
  })
})

describe('diffOf', () => {
  it('reports changed, added and removed paths outside the mask, and nothing under a masked path', () => {
    const before: Json = { status: 200, body: { data: [{ id: 'x', name: 'a', gone: 1 }] } }
    const after: Json = { status: 201, body: { data: [{ id: 'y', name: 'a', extra: 2 }] } }
    expect(diffOf(before, after, new Set(['body.data[0].id']))).toEqual([
      ['changed', 'status', 200, 201],
      ['removed', 'body.data[0].gone', 1, undefined],
      ['added', 'body.data[0].extra', undefined, 2],
    ])
    expect(diffOf(before, after, new Set(['status', 'body']))).toEqual([])
  })
})

describe('compareRecordings', () => {
  it('masks what differs between the two before runs (ids in body and URL, instants, date) and finds no difference', () => {
    const after = [created('cccc', 'Wed, 03'), read('cccc')]
    const comparison = compareRecordings(beforeA, beforeB, after)
    expect(comparison.differences).toEqual([])
    expect([...comparison.masks.keys()].sort()).toEqual([
      'body.data.created_at',
      'body.data.key_id',
      'body.key',
      'headers.date',
      'url.path[*]',
    ])
    expect(comparison.files).toEqual([{ file: FILE, responses: 2, masked: 6, differences: 0, allowed: 0 }])
    expect(formatComparison(comparison)).toContain('0 difference(s) remain')
  })

  it('reports a changed status, header, query parameter and body field that were stable before', () => {
    const after = [
      created('cccc', 'Wed, 03', { status: 200, headers: { 'content-type': 'application/json; charset=utf-8', date: 'Wed, 03' } }),
      read('cccc', 1, { url: '/settings/integrations/api/keys/cccc?expand=none', body: { data: { key_id: 'cccc', name: 'crm' } } }),
    ]
    const found = compareRecordings(beforeA, beforeB, after).differences.map((d) => `${d.seq} ${d.kind} ${d.path}`)
    expect(found).toEqual(['0 changed status', '0 removed headers.x-content-type-options', '1 changed url.query.expand', '1 changed body.data.name'])
  })

  it('reports a missing and an extra response, counts a test only "after" apart, and leaves an unstable one out', () => {
    const newTest = { ...read('cccc', 0), test: 'teams > lists teams' }
    const after = [created('cccc', 'Wed, 03'), read('cccc', 2), newTest]
    const comparison = compareRecordings([...beforeA, read('aaaa', 5)], beforeB, after)
    expect(comparison.differences.map((d) => `${d.seq} ${d.kind}`)).toEqual(['1 missing', '2 extra'])
    expect([...comparison.newTests.values()]).toEqual([1])
    expect(comparison.unstable.map((entry) => entry.seq)).toEqual([5])
  })

  it('masks a header that varied in any response everywhere, and a body path that varied in one response of a test in all of its responses', () => {
    const other = (seq: number, reset: string, at: string): Recorded => ({ ...read('k', seq), test: 'other test', headers: { 'x-ratelimit-reset': reset }, body: { at } })
    // Both "before" runs happened to see the same reset and instant in the second response of each test.
    const runA = [{ ...read('k', 0), headers: { 'x-ratelimit-reset': '59' }, body: { at: 't1' } }, { ...read('k', 1), headers: { 'x-ratelimit-reset': '60' }, body: { at: 't3' } }, other(0, '60', 't5')]
    const runB = [{ ...read('k', 0), headers: { 'x-ratelimit-reset': '58' }, body: { at: 't2' } }, { ...read('k', 1), headers: { 'x-ratelimit-reset': '60' }, body: { at: 't3' } }, other(0, '60', 't5')]
    const after = [{ ...read('k', 0), headers: { 'x-ratelimit-reset': '57' }, body: { at: 't7' } }, { ...read('k', 1), headers: { 'x-ratelimit-reset': '59' }, body: { at: 't8' } }, other(0, '59', 't9')]
    const comparison = compareRecordings(runA, runB, after)
    expect(comparison.headersEverywhere).toEqual(['headers.x-ratelimit-reset'])
    // `at` never varied in "other test": a change there is still reported.
    expect(comparison.differences.map((d) => `${d.test} ${d.path}`)).toEqual(['other test body.at'])
  })

  it('flags a test whose responses came in another order in the two before runs', () => {
    const swapped = [{ ...read('bbbb'), seq: 0 }, { ...created('bbbb', 'Tue, 02'), seq: 1 }]
    expect(compareRecordings(beforeA, swapped, beforeA).reordered).toEqual([`${FILE} > keys > creates a key`])
  })

  it('lists a difference an allow rule names apart, and does not count it', () => {
    const after = [created('cccc', 'Wed, 03'), read('cccc', 1, { body: { data: { key_id: 'cccc', name: 'CRM', description: 'Read users' } } })]
    const rules = parseAllow('# documented additions\nGET /settings/**/keys/* body.data.description  # scope hints\n')
    const comparison = compareRecordings(beforeA, beforeB, after, rules)
    expect(comparison.differences).toEqual([])
    expect(comparison.allowed.map((d) => `${d.kind} ${d.path}`)).toEqual(['added body.data.description'])
    expect(comparison.files[0]?.allowed).toBe(1)
    // The same rule does not cover another path, method or URL.
    const other = compareRecordings(beforeA, beforeB, [created('cccc', 'Wed, 03'), read('cccc', 1, { status: 404 })], rules)
    expect(other.differences.map((d) => d.path)).toEqual(['status'])
  })
})

describe('parseAllow', () => {
  it('matches [*] to any index, * to one key or segment, ** across segments, and a path below the pattern', () => {
    const [rule] = parseAllow('get /api/** body.data[*].scopes[*].*')
    expect(rule?.method).toBe('GET')
    expect(rule?.url.test('/api/public/v1/scopes')).toBe(true)
    const field = rule?.field as RegExp
    expect(field.test('body.data[3].scopes[0].description')).toBe(true)
    expect(field.test('body.data[3].scopes[0].description.text')).toBe(true)
    expect(field.test('body.data.scopes[0].description')).toBe(false)
    expect(parseAllow('GET /a/*/c status')[0]?.url.test('/a/b/x/c')).toBe(false)
  })

  it('refuses a line without METHOD URL FIELD', () => {
    expect(() => parseAllow('GET /scopes')).toThrow('allow rule needs METHOD URL FIELD: GET /scopes')
  })
})
