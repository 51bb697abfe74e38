/**
 * fast-check generators of hostile requests to the public API: query strings, path ids,
 * credentials and other headers, and bodies. A generated `Attack` names its keys symbolically
 * (`full`, `scope:todos:read`, …) so it does not depend on one server's plaintext keys;
 * `resolveAttack` turns it into bytes for a given set of keys.
 */
import fc from 'fast-check'
import type { RawHeaders, RawRequest } from '../helpers/http-client.js'
import { squeeze } from './harness.js'
import { emailsOf, foreignIds, idsOf, MAX_SEED_ID, pathKind, type IdKind } from './seed-ids.js'

/** A mounted route as the route table lists it, without the prefix. */
export interface RouteInfo {
  method: string
  url: string
  operationId: string
  /** null on the events feed, which any valid key may call. */
  scope: string | null
}

/** The query parameters spec 4.1 lists for each endpoint (written out from the spec's table). */
export const SPEC_QUERY: Readonly<Record<string, readonly string[]>> = {
  '/v1/users': ['page', 'per_page', 'active', 'email', 'updated_since'],
  '/v1/employees': ['page', 'per_page', 'updated_since'],
  '/v1/roles': ['page', 'per_page'],
  '/v1/company': [],
  '/v1/projects': ['page', 'per_page', 'status', 'kind', 'customer_id', 'updated_since'],
  '/v1/shifts': ['page', 'per_page', 'employee_id', 'project_id', 'status', 'date_from', 'date_to', 'updated_since'],
  '/v1/absences': ['page', 'per_page', 'employee_id', 'status', 'date_from', 'date_to', 'updated_since'],
  '/v1/expenses': ['page', 'per_page', 'employee_id', 'project_id', 'category', 'date_from', 'date_to', 'updated_since'],
  '/v1/todos': ['page', 'per_page', 'status', 'assigned_to', 'list_id', 'important', 'due_from', 'due_to', 'updated_since'],
}
const ALL_PARAMS = [...new Set(Object.values(SPEC_QUERY).flat())]

/** The id filters and what they name. */
export const ID_FILTERS: Readonly<Record<string, IdKind>> = {
  employee_id: 'employees',
  project_id: 'projects',
  list_id: 'lists',
  assigned_to: 'users',
}

// ---------------------------------------------------------------------------------------------
// Keys

/** The keys an attack can present; the suite creates one of each per server. */
export const SCOPES = [
  'users:read', 'users:write', 'employees:read', 'roles:read', 'company:read', 'projects:read',
  'shifts:read', 'absences:read', 'expenses:read', 'todos:read', 'todos:write',
] as const
export type KeyName =
  | 'full'
  | `scope:${(typeof SCOPES)[number]}`
  | 'reads'
  | 'company3'
  | 'revoked'
  | 'disabled'
  | 'tampered'
  | 'upper'
  | 'unknown'
export const KEY_NAMES: readonly KeyName[] = ['full', ...SCOPES.map((s) => `scope:${s}` as const), 'reads', 'company3', 'revoked', 'disabled', 'tampered', 'upper', 'unknown']

export type AuthPlan =
  | { kind: 'none' }
  | { kind: 'x-api-key'; key: KeyName }
  | { kind: 'bearer'; key: KeyName; scheme: string }
  | { kind: 'both'; x: KeyName; bearer: KeyName }
  | { kind: 'twice'; header: 'x-api-key' | 'authorization'; first: KeyName; second: KeyName }
  | { kind: 'raw'; header: 'x-api-key' | 'authorization'; value: string }
  | { kind: 'mangled'; header: 'x-api-key' | 'authorization'; how: 'pad' | 'truncate' | 'double' | 'prefix' | 'no-scheme' | 'basic' }

// ---------------------------------------------------------------------------------------------
// Text

const latin1Printable = fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c))
/** A header value Node will send (tab, printable ASCII, 0x80–0xFF). */
export const headerText = (maxLength = 40) => fc.string({ unit: latin1Printable, maxLength })
const hex = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length })

/** UTF-8 bytes of `text`, percent-encoded except RFC 3986 unreserved characters. */
export function percentEncode(text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte)
    out += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/**
 * `text` as a careless client puts it in a URL: printable ASCII left as is (a `+` stays a `+`),
 * other UTF-8 bytes sent raw as single bytes 0x80–0xFF, the rest percent-encoded.
 */
function looseEncode(text: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    if (byte > 0x20 && byte < 0x7f && !'&#%?'.includes(String.fromCharCode(byte))) out += String.fromCharCode(byte)
    else if (byte >= 0x80) out += String.fromCharCode(byte)
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

/** Already-encoded fragments no encoder produces: bad escapes, invalid UTF-8, lone surrogates (CESU-8), NUL, controls. */
const RAW_FRAGMENTS = [
  '%00', '%ED%A0%80', '%ED%B0%80', '%ED%A0%80%ED%B0%80', '%F0%9F%98', '%C0%AF', '%C0%80', '%FF', '%FE%FF', '%zz', '%', '%2', '%%',
  '%u0041', '%uD800', '%E0%A4', '%EF%BF%BD', '%0A', '%0D%0A', '%1F', '%7F', '%C2%85', '%E2%80%A8', '%F4%90%80%80', '%2B', '+',
  '%20', '%26', '%3D', '%23', '%3F', '%5B%5D', '%2F', '..', '%2E%2E',
]
const rawFragment = fc.constantFrom(...RAW_FRAGMENTS)

const HOSTILE_NUMBERS = [
  '0', '-1', '-0', '1.5', '1.0', '1e2', '1E2', '0x10', '0X1A', '0b1', '0o7', '+1', ' 1', '1 ', '01', '00000000000000000001',
  '2147483647', '2147483648', '4294967296', '9007199254740991', '9007199254740992', '9007199254740993', '18446744073709551616',
  '99999999999999999999999999999999', `1${'0'.repeat(400)}`, '-9999999999999999', 'NaN', 'Infinity', '-Infinity', 'null',
  'undefined', 'true', '[]', '{}', '1,2', '1;2', '١٢', '１２', '1_000', '.5', '5.', '', '1n', '٣',
]
const HOSTILE_TIMES = [
  '2026-02-30', '2026-02-29', '2024-02-29', '2026-13-01', '2026-00-10', '2026-1-1', '20260101', '0000-01-01', '0001-01-01',
  '9999-12-31', '10000-01-01', '-002026-01-01', '+002026-01-01', '2026-01-01T00:00:00Z', '2026-01-01T24:00:00Z',
  '2026-01-01T23:59:60Z', '2026-01-01T00:00:00', '2026-01-01T00:00:00+02:00', '2026-01-01T00:00:00 02:00',
  '2026-01-01T00:00:00.123456789Z', '2026-01-01T00:00:00-23:59', '2026-01-01T00:00:00+24:00', '2026-W01', '2026-001', 'now',
  '1700000000', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999-23:59', '0000-12-31T23:00:00-01:00',
  '0001-01-01T00:00:00+00:01', '2026-03-29T02:30:00+01:00', '2026-11-22t10:00:00z', '2026-11-22T10:00Z', '2026-11-22T10Z',
]
const ENUMS = [
  'waiting', 'open', 'in_progress', 'done', 'cancelled', 'planned', 'active', 'on_hold', 'completed', 'scheduled', 'confirmed',
  'requested', 'approved', 'rejected', 'internal', 'customer', 'maintenance', 'travel', 'meals', 'lodging', 'materials',
  'equipment', 'other', 'OPEN', 'Open', 'open ', 'true', 'false', 'TRUE', '1', 'yes',
]

const anyText = fc.oneof(
  { arbitrary: fc.string({ maxLength: 30 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }), weight: 2 },
  { arbitrary: fc.integer({ min: 1, max: 6_000 }).map((n) => 'x'.repeat(n)), weight: 1 },
)

const someDay = fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10))
const someInstant = fc
  .tuple(fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2030-12-31T00:00:00Z'), noInvalidDate: true }), fc.constantFrom('Z', '+02:00', '-05:30', '+00:00'))
  .map(([d, zone]) => d.toISOString().replace('Z', zone))

/** An id of `kind`: company 1's, company 2's, never existing, or not an id at all. */
export function idValue(kind: IdKind): fc.Arbitrary<string> {
  const own = idsOf(kind, 1)
  const foreign = foreignIds(kind)
  return fc.oneof(
    { arbitrary: fc.constantFrom(...own).map(String), weight: 5 },
    { arbitrary: fc.constantFrom(...foreign).map(String), weight: 2 },
    { arbitrary: fc.integer({ min: MAX_SEED_ID + 1, max: MAX_SEED_ID + 40 }).map(String), weight: 2 },
    { arbitrary: fc.integer({ min: 1, max: 2 ** 31 - 1 }).map(String), weight: 1 },
    { arbitrary: fc.constantFrom(...HOSTILE_NUMBERS), weight: 2 },
  )
}

/** A plausible value of the query parameter `name`, or a hostile one. */
function paramValue(name: string): fc.Arbitrary<string> {
  const plausible: Record<string, fc.Arbitrary<string>> = {
    page: fc.integer({ min: 1, max: 4 }).map(String),
    per_page: fc.integer({ min: 1, max: 100 }).map(String),
    active: fc.constantFrom('true', 'false'),
    important: fc.constantFrom('true', 'false'),
    email: fc.constantFrom(...emailsOf(1), ...emailsOf(2), 'NOBODY@example.com'),
    updated_since: someInstant,
    date_from: someDay,
    date_to: someDay,
    due_from: someDay,
    due_to: someDay,
    status: fc.constantFrom(...ENUMS),
    kind: fc.constantFrom(...ENUMS),
    category: fc.constantFrom(...ENUMS),
    customer_id: fc.integer({ min: 0, max: 700 }).map(String),
  }
  // Own properties only: a generated name may well be "constructor" or "__proto__".
  const idKind = Object.hasOwn(ID_FILTERS, name) ? ID_FILTERS[name] : undefined
  const good = idKind !== undefined ? idValue(idKind) : Object.hasOwn(plausible, name) ? plausible[name] : undefined
  const hostile = fc.oneof(fc.constantFrom(...HOSTILE_NUMBERS), fc.constantFrom(...HOSTILE_TIMES), anyText)
  return good === undefined ? hostile : fc.oneof({ arbitrary: good, weight: 3 }, { arbitrary: hostile, weight: 2 })
}

const UNKNOWN_NAMES = [
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'page[]', 'page[0]', 'PAGE', 'Per_Page', 'per_page ',
  ' page', 'a.b', '', 'fields', 'sort', 'include', 'filter[status]', 'limit', 'offset', 'company_id', 'id',
]

/** One `name=value` pair of a query string, encoded one way or another. */
function queryPair(known: readonly string[]): fc.Arbitrary<string> {
  const name = fc.oneof(
    ...(known.length > 0 ? [{ arbitrary: fc.constantFrom(...known), weight: 8 }] : []),
    { arbitrary: fc.constantFrom(...ALL_PARAMS), weight: 2 },
    { arbitrary: fc.constantFrom(...UNKNOWN_NAMES), weight: 1 },
    { arbitrary: anyText, weight: 1 },
  )
  return name.chain((n) =>
    fc.oneof(
      { arbitrary: paramValue(n).map((v) => `${percentEncode(n)}=${percentEncode(v)}`), weight: 6 },
      { arbitrary: paramValue(n).map((v) => `${looseEncode(n)}=${looseEncode(v)}`), weight: 2 },
      { arbitrary: fc.tuple(paramValue(n), rawFragment, fc.boolean()).map(([v, raw, before]) => `${percentEncode(n)}=${before ? raw + percentEncode(v) : percentEncode(v) + raw}`), weight: 2 },
      { arbitrary: rawFragment.map((raw) => `${percentEncode(n)}${raw}=1`), weight: 1 },
      { arbitrary: fc.constant(percentEncode(n)), weight: 1 },
      { arbitrary: fc.constantFrom('=', '&', '==', '=1', 'a=1=2', '&&&', ';', 'a;b=1'), weight: 1 },
    ),
  )
}

/** The query string of a request to `url`: empty, or `?` and pairs (repeats included). */
export function queryString(url: string): fc.Arbitrary<string> {
  const listUrl = url.replace(/\/:id.*$/, '')
  const known = pathKind(url) === undefined ? (SPEC_QUERY[listUrl] ?? []) : []
  return fc.oneof(
    { arbitrary: fc.constant(''), weight: 3 },
    { arbitrary: fc.array(queryPair(known), { minLength: 1, maxLength: 5 }).map((pairs) => `?${pairs.join('&')}`), weight: 6 },
    {
      // A repeated parameter, as `a=1&a=2`.
      arbitrary: fc.tuple(queryPair(known), fc.integer({ min: 2, max: 4 })).map(([pair, times]) => `?${Array.from({ length: times }, () => pair).join('&')}`),
      weight: 1,
    },
    { arbitrary: fc.constantFrom('?', '??', '?&', '?#', '?%', `?per_page=${'9'.repeat(7_000)}`), weight: 1 },
  )
}

/** The `:id` segment of a path, as sent. */
export function pathId(kind: IdKind): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: idValue(kind).map(percentEncode), weight: 8 },
    { arbitrary: fc.constantFrom(...HOSTILE_NUMBERS).map(looseEncode), weight: 2 },
    { arbitrary: fc.constantFrom('%31', '1%00', '%2F1', '1%2F2', '..', '%2E%2E', '1%20', '%201', '1;x', '1,2', '%EF%BC%91', '%ED%A0%80', '%zz', '1%', '%', '1.', '~1'), weight: 2 },
    { arbitrary: anyText.filter((s) => s.length > 0).map(percentEncode), weight: 1 },
    { arbitrary: fc.integer({ min: 1, max: 400 }).map((n) => '9'.repeat(n)), weight: 1 },
  )
}

// ---------------------------------------------------------------------------------------------
// Headers

const authPlan: fc.Arbitrary<AuthPlan> = (() => {
  const key = fc.constantFrom(...KEY_NAMES)
  const header = fc.constantFrom('x-api-key' as const, 'authorization' as const)
  return fc.oneof(
    { arbitrary: fc.constant({ kind: 'x-api-key', key: 'full' } as AuthPlan), weight: 28 },
    { arbitrary: fc.constantFrom('Bearer', 'bearer', 'BEARER').map((scheme): AuthPlan => ({ kind: 'bearer', key: 'full', scheme })), weight: 28 },
    { arbitrary: fc.record({ kind: fc.constant('x-api-key' as const), key }), weight: 8 },
    { arbitrary: fc.record({ kind: fc.constant('bearer' as const), key, scheme: fc.constant('Bearer') }), weight: 8 },
    { arbitrary: fc.constant({ kind: 'none' } as AuthPlan), weight: 3 },
    { arbitrary: fc.record({ kind: fc.constant('both' as const), x: key, bearer: key }), weight: 3 },
    { arbitrary: fc.record({ kind: fc.constant('both' as const), x: fc.constant('full' as KeyName), bearer: fc.constant('full' as KeyName) }), weight: 2 },
    { arbitrary: fc.record({ kind: fc.constant('twice' as const), header, first: key, second: key }), weight: 3 },
    {
      arbitrary: fc.record({
        kind: fc.constant('raw' as const),
        header,
        value: fc.oneof(
          headerText(60),
          fc.constantFrom('', ' ', 'owk_', 'owk__', 'Bearer', 'Bearer ', 'Bearer  ', 'Basic dXNlcjpwYXNz', 'null', 'owk_x_y'),
          fc.tuple(hex(16), hex(64)).map(([id, secret]) => `owk_${id}_${secret}`),
          fc.tuple(hex(16), hex(64)).map(([id, secret]) => `Bearer owk_${id}_${secret}`),
          fc.integer({ min: 100, max: 9_000 }).map((n) => `owk_${'a'.repeat(n)}`),
        ),
      }),
      weight: 5,
    },
    {
      arbitrary: fc.record({ kind: fc.constant('mangled' as const), header, how: fc.constantFrom('pad' as const, 'truncate' as const, 'double' as const, 'prefix' as const, 'no-scheme' as const, 'basic' as const) }),
      weight: 3,
    },
  )
})()

const idempotencyKey = fc.oneof(
  { arbitrary: fc.constant(null), weight: 10 },
  { arbitrary: fc.constantFrom('k1', 'k2', 'retry', 'A'), weight: 4 },
  { arbitrary: fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 40 }), weight: 3 },
  { arbitrary: headerText(30), weight: 2 },
  { arbitrary: fc.constantFrom('', ' ', 'x'.repeat(255), 'x'.repeat(256), 'k 1', '\tk', 'é'), weight: 1 },
)

const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=UTF-8',
  'application/json; charset=latin1', 'application/json; charset=utf-16', 'text/plain', 'text/json', 'application/jsonx',
  'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/merge-patch+json',
  'application/problem+json', '', ' ', ';', 'application/', '*/*', 'application/json, text/plain', 'application/json; boundary=',
]
const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json' as string | string[] | null), weight: 12 },
  { arbitrary: fc.constant(null), weight: 2 },
  { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 4 },
  { arbitrary: fc.tuple(fc.constantFrom(...CONTENT_TYPES), fc.constantFrom(...CONTENT_TYPES)).map(([a, b]) => [a, b]), weight: 1 },
  { arbitrary: headerText(40), weight: 1 },
)

const extraHeaders = fc.array(
  fc.oneof(
    fc.constantFrom<[string, string | string[]]>(
      ['accept', 'text/html'],
      ['accept', 'application/xml'],
      ['accept', '*/*'],
      ['accept-encoding', 'gzip, deflate, br'],
      ['content-encoding', 'gzip'],
      ['content-encoding', 'identity'],
      ['x-http-method-override', 'DELETE'],
      ['x-forwarded-for', '10.0.0.1, 127.0.0.1'],
      ['x-forwarded-host', 'evil.example'],
      ['origin', 'https://evil.example'],
      ['cookie', 'session=1; session=2'],
      ['host', 'evil.example'],
      ['expect', '100-continue'],
      ['accept-language', 'xx'],
      ['if-none-match', '*'],
      ['range', 'bytes=0-10'],
      ['x-request-id', '../../etc/passwd'],
      ['accept', ['application/json', 'text/html']],
    ),
    fc.tuple(fc.constantFrom('x-fuzz', 'x-api-key-2', 'idempotency-key-2', 'x-company-id', 'x-tenant'), headerText(40)),
    fc.integer({ min: 1_000, max: 20_000 }).map((n): [string, string] => ['x-padding', 'p'.repeat(n)]),
  ),
  { maxLength: 2 },
)

// ---------------------------------------------------------------------------------------------
// Bodies

/** A JSON literal written as is (huge or odd numbers that JSON.stringify cannot produce). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON text of `value`, with `RawJson` written verbatim; lone surrogates come out escaped. */
export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${jsonText(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

const RAW_LITERALS = ['1e400', '-1e400', '123456789012345678901234567890', '-0', '1E2', '0.1e1', '1.0', '9007199254740993', '2e-400', '1e2', '5e-324']

const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 4 },
  {
    arbitrary: fc.constantFrom<unknown>(
      null, true, false, 0, -1, 1.5, -0, 1e308, 2 ** 31, 2 ** 53, Number.MIN_VALUE, '', ' ', '\u0000', '\ud800', 'a\udc00b', '\u202e',
      '💥', 'x'.repeat(501), [], {}, [1], { a: 1 }, '1', 'true', 'null', '2026-02-30', '2026-01-01', '2026-01-01T10:00:00Z',
      '0000-01-01', '9999-12-31T23:59:59.999-23:59', 'open', 'done', 'urgent', 'normal', '\t', '\n', 'a\u0000b',
    ),
    weight: 4,
  },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 2 },
  { arbitrary: fc.constantFrom(...RAW_LITERALS).map((text) => new RawJson(text)), weight: 2 },
  { arbitrary: fc.integer({ min: -5, max: 200 }), weight: 2 },
)

/** A long string: up to ~290,000 characters, or just around the 256 KiB body limit. */
const longString = fc.oneof(
  fc.integer({ min: 0, max: 290_000 }).map((n) => 'y'.repeat(n)),
  fc.constantFrom(262_144 - 200, 262_144 - 80, 262_144, 262_300).map((n) => 'z'.repeat(n)),
  fc.integer({ min: 0, max: 40_000 }).map((n) => 'é✓'.repeat(n)),
)

const ownList = fc.constantFrom(...idsOf('lists', 1))
const ownMember = fc.constantFrom(...idsOf('users', 1))
const ownRole = fc.constantFrom(...idsOf('roles', 1))
const priority = fc.constantFrom('low', 'normal', 'high', 'urgent')
const status = fc.constantFrom('waiting', 'open', 'in_progress', 'done', 'cancelled')
const title = fc.oneof({ arbitrary: fc.string({ minLength: 1, maxLength: 40 }), weight: 4 }, { arbitrary: fc.integer({ min: 495, max: 505 }).map((n) => 't'.repeat(n)), weight: 1 })
const due = fc.oneof(
  fc.constant({}),
  someDay.map((day) => ({ due_date: day, due_is_all_day: true })),
  someInstant.map((instant) => ({ due_date: instant, due_is_all_day: false })),
  someInstant.map((instant) => ({ due_date: instant })),
  fc.constant({ due_date: null }),
  fc.boolean().map((allDay) => ({ due_is_all_day: allDay })),
)

const createTodo = fc
  .tuple(
    fc.record(
      { title, list_id: ownList, assigned_to: ownMember, assignee_group_id: ownRole, notes: fc.option(fc.string({ maxLength: 60 })), priority, important: fc.boolean() },
      { requiredKeys: ['title', 'list_id'] },
    ),
    due,
  )
  .map(([body, dueFields]) => ({ ...body, ...dueFields }) as Record<string, unknown>)

const updateTodo = fc
  .tuple(
    fc.record(
      { title, notes: fc.option(fc.string({ maxLength: 60 })), status, priority, important: fc.boolean(), list_id: ownList, assigned_to: ownMember, assignee_group_id: ownRole },
      { requiredKeys: [] },
    ),
    due,
  )
  .map(([body, dueFields]) => ({ ...body, ...dueFields }) as Record<string, unknown>)

const email = fc.oneof(
  { arbitrary: fc.tuple(fc.nat(), fc.stringMatching(/^[a-z][a-z0-9.+-]{0,12}$/)).map(([n, local]) => `${local}.fz${n}@example.com`), weight: 6 },
  { arbitrary: fc.constantFrom(...emailsOf(1), ...emailsOf(2)), weight: 3 },
  { arbitrary: fc.constantFrom(...emailsOf(2)).map((e) => e.toUpperCase()), weight: 1 },
  { arbitrary: fc.constantFrom('a@b.c', 'x@example', '@example.com', 'a@@example.com', 'a b@example.com', 'ü@exämple.com', `${'a'.repeat(245)}@example.com`), weight: 1 },
)
const createUser = fc.record(
  {
    email,
    first_name: fc.string({ minLength: 1, maxLength: 20 }),
    last_name: fc.string({ minLength: 1, maxLength: 20 }),
    role_ids: fc.uniqueArray(ownRole, { maxLength: 5 }),
    send_invite: fc.boolean(),
  },
  { requiredKeys: ['email', 'first_name', 'last_name'] },
) as fc.Arbitrary<Record<string, unknown>>

const FIELD_NAMES = [
  'title', 'notes', 'status', 'priority', 'important', 'due_date', 'due_is_all_day', 'list_id', 'assigned_to', 'assignee_group_id',
  'email', 'first_name', 'last_name', 'role_ids', 'send_invite', 'id', 'company_id', 'claimed_by', 'checklist', 'tag_ids', 'source',
  'created_at', '__proto__', 'constructor', 'Title', '',
]

/** One change to a near-valid body: a field set to a hostile value, dropped, or added. */
const mutation = fc.oneof(
  fc.record({ op: fc.constant('set' as const), field: fc.constantFrom(...FIELD_NAMES), value: hostileJson }),
  fc.record({ op: fc.constant('set' as const), field: fc.constantFrom('title', 'notes', 'email', 'first_name', 'due_date'), value: longString }),
  fc.record({ op: fc.constant('set' as const), field: fc.constantFrom('role_ids'), value: fc.array(hostileJson, { maxLength: 60 }) }),
  fc.record({ op: fc.constant('drop' as const), field: fc.constantFrom(...FIELD_NAMES) }),
  fc.record({ op: fc.constant('set' as const), field: fc.string({ maxLength: 12 }), value: hostileJson }),
)
type Mutation = { op: 'set'; field: string; value: unknown } | { op: 'drop'; field: string }

function mutate(body: Record<string, unknown>, mutations: Mutation[]): Record<string, unknown> {
  // Built as an entry list so that "__proto__" becomes an own key of the JSON text, not a prototype.
  let entries = Object.entries(body)
  for (const m of mutations) {
    entries = entries.filter(([key]) => key !== m.field)
    if (m.op === 'set') entries.push([m.field, m.value])
  }
  const out: Record<string, unknown> = {}
  for (const [key, value] of entries) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  return out
}

/** A JSON text nested `depth` levels deep, in a field of a near-valid to-do, or alone. */
const deepBody = fc.tuple(fc.integer({ min: 1, max: 120_000 }), fc.constantFrom('array', 'object', 'title')).map(([depth, shape]) => {
  if (shape === 'array') return `${'['.repeat(depth)}${']'.repeat(depth)}`
  if (shape === 'object') return `${'{"a":'.repeat(Math.min(depth, 40_000))}1${'}'.repeat(Math.min(depth, 40_000))}`
  return `{"title":${'['.repeat(depth)}${']'.repeat(depth)},"list_id":1,"assigned_to":1}`
})

const INVALID_JSON = [
  '', ' ', '\n', 'null', '[]', '"str"', '1', 'true', 'NaN', 'undefined', "{'title':'x'}", '{"title":"x",}', '{"title":"x"', '{"title"}',
  '{title:"x"}', '\uFEFF{"title":"x","list_id":1,"assigned_to":1}', '{"title":"x"}{"title":"y"}', '{"title":"\\ud800","list_id":1,"assigned_to":1}',
  '{"title":"a\\u0000b","list_id":1,"assigned_to":1}', '{"title":"a","title":"b","list_id":1,"assigned_to":1}',
  '{"__proto__":{"admin":true},"title":"x","list_id":1,"assigned_to":1}', '{"constructor":{"prototype":{"x":1}},"title":"x"}',
  '{"title":"x","list_id":1e400,"assigned_to":1}', '{"title":"\\x41"}', '{"title":"\\u12"}', '{"a":01}', '{"a":.5}', '{"a":+1}',
  '{"a":0x10}', '{"a":Infinity}', '{"a":"\u0001"}', '{"a":"\t"}', '<xml/>', 'title=x&list_id=1', '{"title":"x"}\u0000',
]

/** Bytes a body may hold that are not UTF-8, around an otherwise near-valid to-do. */
const rawBytesBody = fc.constantFrom(
  Buffer.concat([Buffer.from('{"title":"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('b","list_id":1,"assigned_to":1}')]),
  Buffer.concat([Buffer.from('{"title":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('","list_id":1,"assigned_to":1}')]),
  Buffer.concat([Buffer.from('{"title":"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('","list_id":1,"assigned_to":1}')]),
  Buffer.from('{"title":"x","list_id":1,"assigned_to":1}', 'utf16le'),
  Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('{"title":"x","list_id":1,"assigned_to":1}', 'utf16le')]),
  Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
)

/** The body of a request to a route of `operationId` (POST/PATCH), or `null` for none. */
/** A body for `operationId` that is valid, or close to it (a rule of the domain may still refuse it). */
function nearValidBody(operationId: string): fc.Arbitrary<Record<string, unknown>> {
  return operationId === 'createTodo' ? createTodo : operationId === 'updateTodo' ? updateTodo : operationId === 'createUser' ? createUser : fc.constant({})
}

export function bodyFor(operationId: string): fc.Arbitrary<string | Buffer | null> {
  const nearValid = nearValidBody(operationId)
  const mutated = fc.tuple(nearValid, fc.array(mutation, { maxLength: 2 })).map(([body, mutations]) => jsonText(mutate(body, mutations)))
  const escaped = fc.tuple(nearValid, fc.integer({ min: 1, max: 45_000 })).map(([body, n]) =>
    // Every character of a long title written as \uXXXX: 6 bytes each, up to ~270 KiB.
    jsonText({ ...body, title: new RawJson(`"${'\\u0041'.repeat(n)}"`) }),
  )
  return fc.oneof(
    { arbitrary: nearValid.map(jsonText), weight: 8 },
    { arbitrary: mutated, weight: 8 },
    { arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)), weight: 3 },
    { arbitrary: fc.constant(null), weight: 2 },
    { arbitrary: fc.constantFrom(...INVALID_JSON), weight: 2 },
    { arbitrary: nearValid.chain((body) => fc.nat({ max: 200 }).map((cut) => jsonText(body).slice(0, cut))), weight: 1 },
    { arbitrary: deepBody, weight: 1 },
    { arbitrary: escaped, weight: 1 },
    { arbitrary: rawBytesBody, weight: 1 },
    { arbitrary: fc.string({ maxLength: 100 }), weight: 1 },
  )
}

// ---------------------------------------------------------------------------------------------
// Requests

/** One generated request. `again` sends it a second time right after the first (a retry). */
export interface Attack {
  route: RouteInfo
  id: string | null
  query: string
  auth: AuthPlan
  idempotencyKey: string | string[] | null
  contentType: string | string[] | null
  extra: Array<[string, string | string[]]>
  body: string | Buffer | null
  again: boolean
}

const isWrite = (method: string) => method !== 'GET' && method !== 'HEAD'

/** An attack in one line, as a failure report shows it (long runs squeezed, nothing else left out). */
export function describeAttack(attack: Attack): string {
  const body = attack.body === null ? '' : Buffer.isBuffer(attack.body) ? ` body=0x${attack.body.toString('hex')}` : ` body=${JSON.stringify(squeeze(attack.body))}`
  const headers = {
    auth: attack.auth,
    ...(attack.idempotencyKey === null ? {} : { idempotencyKey: attack.idempotencyKey }),
    ...(attack.contentType === null ? {} : { contentType: attack.contentType }),
    ...(attack.extra.length === 0 ? {} : { extra: attack.extra }),
  }
  return `${attack.again ? '2× ' : ''}${attack.route.method} ${squeeze(attackPath(attack))} ${squeeze(JSON.stringify(headers))}${body}`
}

function attackOn(route: RouteInfo): fc.Arbitrary<Attack> {
  const kind = pathKind(route.url)
  const write = isWrite(route.method)
  const attack: fc.Arbitrary<Attack> = fc.record({
    route: fc.constant(route),
    id: kind === undefined ? fc.constant(null) : pathId(kind),
    query: queryString(route.url),
    auth: authPlan,
    idempotencyKey: write
      ? fc.oneof({ arbitrary: idempotencyKey, weight: 12 }, { arbitrary: fc.tuple(idempotencyKey, idempotencyKey).map(([a, b]) => [a ?? 'k1', b ?? 'k2']), weight: 1 })
      : fc.oneof({ arbitrary: fc.constant(null), weight: 9 }, { arbitrary: idempotencyKey, weight: 1 }),
    contentType: write ? contentType : fc.oneof({ arbitrary: fc.constant(null), weight: 9 }, { arbitrary: contentType, weight: 1 }),
    extra: fc.oneof({ arbitrary: fc.constant([] as Array<[string, string | string[]]>), weight: 6 }, { arbitrary: extraHeaders, weight: 1 }),
    body: write ? bodyFor(route.operationId) : fc.oneof({ arbitrary: fc.constant(null), weight: 15 }, { arbitrary: bodyFor('createTodo'), weight: 1 }),
    again: write ? fc.oneof({ arbitrary: fc.constant(false), weight: 5 }, { arbitrary: fc.constant(true), weight: 1 }) : fc.constant(false),
  })
  // Writes are also sent as a careful client sends them, so that enough of them succeed for the
  // data checks to bite: company 1's full key, JSON, a near-valid body, a fresh Idempotency-Key.
  const careful: fc.Arbitrary<Attack> = fc.record({
    route: fc.constant(route),
    id: kind === undefined ? fc.constant(null) : fc.oneof({ arbitrary: fc.constantFrom(...idsOf(kind, 1)).map(String), weight: 6 }, { arbitrary: idValue(kind).map(percentEncode), weight: 1 }),
    query: fc.constant(''),
    auth: fc.oneof(
      fc.constant<AuthPlan>({ kind: 'x-api-key', key: 'full' }),
      fc.constant<AuthPlan>({ kind: 'bearer', key: 'full', scheme: 'Bearer' }),
    ),
    // Fresh in every property run (see `resolveAttack`), so a shrunk batch meets fresh slots too.
    idempotencyKey: fc.option(fc.uuid().map((uuid) => `${FRESH}${uuid}`), { nil: null }),
    contentType: fc.constant('application/json'),
    extra: fc.constant([] as Array<[string, string | string[]]>),
    body: fc.oneof({ arbitrary: nearValidBody(route.operationId).map(jsonText), weight: 4 }, { arbitrary: bodyFor(route.operationId), weight: 1 }),
    again: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }),
  })
  const chosen = write ? fc.oneof({ arbitrary: careful, weight: 2 }, { arbitrary: attack, weight: 3 }) : attack
  return chosen.map((value) => Object.assign(value, { [fc.toStringMethod]: () => describeAttack(value) }))
}

/** A request to one of `routes`: write routes more often, since they can change data. */
export function attackArbitrary(routes: readonly RouteInfo[]): fc.Arbitrary<Attack> {
  return fc.oneof(
    ...routes.map((route) => ({ arbitrary: attackOn(route), weight: isWrite(route.method) ? 6 : route.method === 'HEAD' ? 1 : 3 })),
  )
}

/** The concrete path (without prefix) of an attack. */
export function attackPath(attack: Attack): string {
  return `${attack.id === null ? attack.route.url : attack.route.url.replace(':id', attack.id)}${attack.query}`
}

/** The plaintext of every `KeyName` on one server. */
export type KeyRing = Readonly<Record<KeyName, string>>

/** Header values of one credential header, by plan. */
function authHeaders(plan: AuthPlan, keys: KeyRing): RawHeaders {
  const full = keys.full
  switch (plan.kind) {
    case 'none':
      return {}
    case 'x-api-key':
      return { 'x-api-key': keys[plan.key] }
    case 'bearer':
      return { authorization: `${plan.scheme} ${keys[plan.key]}` }
    case 'both':
      return { 'x-api-key': keys[plan.x], authorization: `Bearer ${keys[plan.bearer]}` }
    case 'twice': {
      const value = (key: KeyName) => (plan.header === 'authorization' ? `Bearer ${keys[key]}` : keys[key])
      return { [plan.header]: [value(plan.first), value(plan.second)] }
    }
    case 'raw':
      return { [plan.header]: plan.value }
    case 'mangled': {
      const scheme = plan.header === 'authorization' ? 'Bearer ' : ''
      const value = {
        pad: `${scheme}\t${full}\t `,
        truncate: `${scheme}${full.slice(0, -1)}`,
        double: `${scheme}${full}${full}`,
        prefix: `${scheme}x${full}`,
        'no-scheme': full,
        basic: `Basic ${Buffer.from(`${full}:`).toString('base64')}`,
      }[plan.how]
      return { [plan.header]: value }
    }
  }
}

/** Marks an Idempotency-Key that `resolveAttack` makes unique to the property run. */
export const FRESH = 'fresh:'

/**
 * The request an attack sends to a server whose keys are `keys` (path without the prefix).
 * `run` numbers the property run: a `FRESH` Idempotency-Key becomes `<run>-<uuid>`.
 */
export function resolveAttack(attack: Attack, keys: KeyRing, run = 0): RawRequest {
  const headers: RawHeaders = { ...authHeaders(attack.auth, keys) }
  const fresh = (key: string) => (key.startsWith(FRESH) ? `${run}-${key.slice(FRESH.length)}` : key)
  if (attack.idempotencyKey !== null) headers['idempotency-key'] = Array.isArray(attack.idempotencyKey) ? attack.idempotencyKey.map(fresh) : fresh(attack.idempotencyKey)
  if (attack.contentType !== null) headers['content-type'] = attack.contentType
  for (const [name, value] of attack.extra) if (!(name in headers)) headers[name] = value
  return { method: attack.route.method, path: attackPath(attack), headers, ...(attack.body === null ? {} : { body: attack.body }) }
}
