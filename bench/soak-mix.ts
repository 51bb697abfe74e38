/**
 * The soak's request mix (bench/soak.ts): lists of every resource at random pages (deep ones
 * included), every documented filter with random values, lookups by id, `GET /v1/company`, and
 * writes (`POST`/`PATCH /v1/todos`, `POST /v1/users`), spread over several companies and keys.
 * Values are drawn at random so that caches keyed by company, filter or page see many keys,
 * as a busy integration platform's traffic would give them.
 */
import { randomBytes, randomUUID } from 'node:crypto'

/** What the soak learned about one company before the load (from its first and last pages). */
export interface CompanyView {
  companyId: number
  keys: string[]
  /** Rows per list resource (`pagination.total` unfiltered). */
  totals: Record<string, number>
  /** A few known ids per resource: the first and the last page's rows. */
  ids: Record<string, number[]>
  emails: string[]
  memberIds: number[]
  listIds: number[]
  roleIds: number[]
  customerIds: number[]
  /** To-dos this run created: PATCH targets (a bounded ring). */
  created: number[]
}

export interface PlannedRequest {
  op: string
  method: 'GET' | 'POST' | 'PATCH'
  path: string
  key: string
  body?: string
  headers?: Record<string, string>
  /** A list answer must carry `pagination`. */
  list: boolean
  company: CompanyView | undefined
}

export const LIST_RESOURCES = ['users', 'employees', 'roles', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const
type Resource = (typeof LIST_RESOURCES)[number]

const CREATED_RING = 500
const PER_PAGE = [10, 25, 50, 100]
const ENUMS = {
  projectStatus: ['planned', 'active', 'on_hold', 'completed', 'cancelled'],
  projectKind: ['internal', 'customer', 'maintenance'],
  shiftStatus: ['scheduled', 'confirmed', 'completed', 'cancelled'],
  absenceStatus: ['requested', 'approved', 'rejected', 'cancelled'],
  category: ['travel', 'meals', 'lodging', 'materials', 'equipment', 'other'],
  todoStatus: ['waiting', 'open', 'in_progress', 'done', 'cancelled'],
  priority: ['low', 'normal', 'high', 'urgent'],
} as const

const pick = <T>(values: readonly T[]): T => values[Math.floor(Math.random() * values.length)] as T
const between = (low: number, high: number) => low + Math.floor(Math.random() * (high - low + 1))
const chance = (p: number) => Math.random() < p
const DAY_MS = 86_400_000
const SEED_START = Date.UTC(2025, 5, 1)
const SEED_END = Date.UTC(2027, 0, 31)
const day = (from = SEED_START, to = SEED_END) => new Date(between(from / DAY_MS, to / DAY_MS) * DAY_MS).toISOString().slice(0, 10)
/** An `updated_since` from the seed's oldest rows to a minute ago (the soak's own writes). */
const since = () => new Date(between(Date.UTC(2025, 9, 1), Date.now() - 60_000)).toISOString()
const idOr = (ids: number[], high: number) => (ids.length > 0 && chance(0.8) ? pick(ids) : between(1, high))

function dateRange(params: URLSearchParams, fromName: string, toName: string): void {
  const from = day()
  const shape = between(0, 2)
  if (shape !== 2) params.set(fromName, from)
  if (shape !== 1) params.set(toName, new Date(Date.parse(from) + between(0, 60) * DAY_MS).toISOString().slice(0, 10))
}

/** Every documented filter of `resource`, each a setter of one random value. */
function filtersOf(resource: Resource, view: CompanyView): Array<(params: URLSearchParams) => void> {
  const employee = (p: URLSearchParams) => p.set('employee_id', String(idOr(view.ids.employees ?? [], 200_000)))
  const project = (p: URLSearchParams) => p.set('project_id', String(idOr(view.ids.projects ?? [], 200_000)))
  const updated = (p: URLSearchParams) => p.set('updated_since', since())
  switch (resource) {
    case 'users':
      return [
        (p) => p.set('active', String(chance(0.5))),
        (p) => p.set('email', view.emails.length > 0 && chance(0.6) ? pick(view.emails) : `nobody-${randomBytes(4).toString('hex')}@example.test`),
        updated,
      ]
    case 'employees':
      return [updated]
    case 'roles':
      return []
    case 'projects':
      return [(p) => p.set('status', pick(ENUMS.projectStatus)), (p) => p.set('kind', pick(ENUMS.projectKind)), (p) => p.set('customer_id', String(idOr(view.customerIds, 500))), updated]
    case 'shifts':
      return [employee, project, (p) => p.set('status', pick(ENUMS.shiftStatus)), (p) => dateRange(p, 'date_from', 'date_to'), updated]
    case 'absences':
      return [employee, (p) => p.set('status', pick(ENUMS.absenceStatus)), (p) => dateRange(p, 'date_from', 'date_to'), updated]
    case 'expenses':
      return [employee, project, (p) => p.set('category', pick(ENUMS.category)), (p) => dateRange(p, 'date_from', 'date_to'), updated]
    case 'todos':
      return [
        (p) => p.set('status', pick(ENUMS.todoStatus)),
        (p) => p.set('assigned_to', String(idOr(view.memberIds, 200_000))),
        (p) => p.set('list_id', String(idOr(view.listIds, 1_000))),
        (p) => p.set('important', String(chance(0.5))),
        (p) => dateRange(p, 'due_from', 'due_to'),
        updated,
      ]
  }
}

/** An unfiltered page: uniform over every page of the list (so mostly deep ones at scale), sometimes past the last. */
function plainList(view: CompanyView, key: string): PlannedRequest {
  const resource = pick(LIST_RESOURCES)
  const perPage = pick(PER_PAGE)
  const pages = Math.max(1, Math.ceil((view.totals[resource] ?? 0) / perPage))
  const page = chance(0.05) ? pages + between(1, 1_000) : chance(0.2) ? between(1, Math.min(pages, 5)) : between(1, pages)
  return { op: 'list', method: 'GET', path: `/v1/${resource}?per_page=${perPage}&page=${page}`, key, list: true, company: view }
}

function filteredList(view: CompanyView, key: string): PlannedRequest {
  const resource = pick(LIST_RESOURCES.filter((name) => name !== 'roles'))
  const filters = filtersOf(resource, view)
  const params = new URLSearchParams()
  const count = Math.min(filters.length, between(1, 3))
  for (const setter of [...filters].sort(() => Math.random() - 0.5).slice(0, count)) setter(params)
  params.set('per_page', String(pick(PER_PAGE)))
  params.set('page', String(chance(0.7) ? 1 : between(2, 40)))
  return { op: 'filter', method: 'GET', path: `/v1/${resource}?${params}`, key, list: true, company: view }
}

function byId(view: CompanyView, key: string): PlannedRequest {
  const resource = pick(LIST_RESOURCES)
  // Mostly the company's own rows; one in five a random id (another company's or none: 404).
  const id = idOr(view.ids[resource] ?? [], 200_000)
  return { op: 'by-id', method: 'GET', path: `/v1/${resource}/${id}`, key, list: false, company: view }
}

function json(op: string, method: 'POST' | 'PATCH', path: string, key: string, body: unknown, view: CompanyView): PlannedRequest {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (chance(0.5)) headers['idempotency-key'] = randomUUID()
  return { op, method, path, key, body: JSON.stringify(body), headers, list: false, company: view }
}

function createTodo(view: CompanyView, key: string, n: number): PlannedRequest {
  const body: Record<string, unknown> = { title: `soak to-do ${n}`, list_id: pick(view.listIds) }
  if (chance(0.8) || view.roleIds.length === 0) body.assigned_to = pick(view.memberIds)
  else body.assignee_group_id = pick(view.roleIds)
  if (chance(0.3)) body.notes = `notes ${randomBytes(between(4, 200)).toString('hex')}`
  if (chance(0.5)) body.priority = pick(ENUMS.priority)
  if (chance(0.3)) body.important = true
  if (chance(0.3)) Object.assign(body, { due_is_all_day: true, due_date: day(Date.UTC(2026, 0, 1)) })
  else if (chance(0.3)) body.due_date = new Date(between(Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1))).toISOString()
  return json('post-todo', 'POST', '/v1/todos', key, body, view)
}

function patchTodo(view: CompanyView, key: string, n: number): PlannedRequest {
  const id = view.created.length > 0 && chance(0.7) ? pick(view.created) : pick(view.ids.todos ?? [1])
  const body: Record<string, unknown> = {}
  if (chance(0.5)) body.title = `soak edit ${n}`
  if (chance(0.4)) body.priority = pick(ENUMS.priority)
  if (chance(0.3)) body.important = chance(0.5)
  if (chance(0.3)) body.notes = chance(0.2) ? null : `edited ${n}`
  // Reopening is allowed from every status; the others sometimes make a 422 (done → in_progress).
  if (chance(0.3)) body.status = chance(0.5) ? 'open' : pick(['in_progress', 'done'])
  if (Object.keys(body).length === 0) body.title = `soak edit ${n}`
  return json('patch-todo', 'PATCH', `/v1/todos/${id}`, key, body, view)
}

function createUser(view: CompanyView, key: string, n: number, runId: string, others: CompanyView[]): PlannedRequest {
  // Mostly new people; sometimes someone with a login in another company (pending membership).
  const elsewhere = others.filter((other) => other !== view && other.emails.length > 0)
  const email = chance(0.1) && elsewhere.length > 0 ? pick(pick(elsewhere).emails) : `soak-${runId}-${n}@example.test`
  const body: Record<string, unknown> = { email, first_name: 'Soak', last_name: `Person ${n}` }
  if (chance(0.3) && view.roleIds.length > 0) body.role_ids = [pick(view.roleIds)]
  return json('post-user', 'POST', '/v1/users', key, body, view)
}

/** Relative weights of the mix; writes only for companies with lists and members to write to. */
const MIX: ReadonlyArray<readonly [string, number]> = [
  ['list', 35],
  ['filter', 30],
  ['by-id', 17],
  ['company', 3],
  ['post-todo', 6],
  ['patch-todo', 6],
  ['post-user', 3],
]
const MIX_TOTAL = MIX.reduce((sum, [, weight]) => sum + weight, 0)

/** Draws the next request of the mix. `n` numbers writes (titles, emails) uniquely within the run. */
export function nextRequest(views: CompanyView[], n: number, runId: string): PlannedRequest {
  // The large company gets half the traffic, the others share the rest.
  const view = views.length > 1 && chance(0.5) ? (views[0] as CompanyView) : pick(views.slice(1).length > 0 ? views.slice(1) : views)
  const key = pick(view.keys)
  let roll = Math.random() * MIX_TOTAL
  let op = 'list'
  for (const [name, weight] of MIX) {
    roll -= weight
    if (roll < 0) {
      op = name
      break
    }
  }
  const writable = view.listIds.length > 0 && view.memberIds.length > 0
  if (!writable && (op === 'post-todo' || op === 'patch-todo')) op = 'list'
  switch (op) {
    case 'filter':
      return filteredList(view, key)
    case 'by-id':
      return byId(view, key)
    case 'company':
      return { op, method: 'GET', path: '/v1/company', key, list: false, company: view }
    case 'post-todo':
      return createTodo(view, key, n)
    case 'patch-todo':
      return patchTodo(view, key, n)
    case 'post-user':
      return createUser(view, key, n, runId, views)
    default:
      return plainList(view, key)
  }
}

/** A key that does not exist (a fresh key id each time): the verifier's miss path, answered 401. */
export function unknownKeyRequest(): PlannedRequest {
  // Well-formed (the key pattern), so it reaches the verifier and its cache, not the parser's refusal.
  const key = `owk_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('hex')}`
  return { op: 'unknown-key', method: 'GET', path: `/v1/todos?per_page=${pick(PER_PAGE)}`, key, list: true, company: undefined }
}

/** Remembers a to-do the run created, as a PATCH target (the newest `CREATED_RING`). */
export function rememberCreated(view: CompanyView, id: number): void {
  view.created.push(id)
  if (view.created.length > CREATED_RING) view.created.splice(0, view.created.length - CREATED_RING)
}

/**
 * Whether `body` is the answer the spec promises for `status`: a 2xx carries `data` (a list also
 * `pagination`), anything else the error envelope with its own status. A reason when not.
 */
export function envelopeProblem(status: number, body: string, list: boolean): string | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return `not JSON: ${body.slice(0, 120)}`
  }
  if (typeof parsed !== 'object' || parsed === null) return 'not an object'
  const record = parsed as Record<string, unknown>
  if (status >= 200 && status < 300) {
    if (!('data' in record)) return 'a 2xx without data'
    if (!list) return typeof record.data === 'object' && record.data !== null && !Array.isArray(record.data) ? undefined : 'data is not one record'
    const pagination = record.pagination as Record<string, unknown> | undefined
    if (!Array.isArray(record.data)) return 'list data is not an array'
    const numbers = ['page', 'per_page', 'total', 'total_pages'].every((name) => typeof pagination?.[name] === 'number')
    return numbers ? undefined : 'list without pagination numbers'
  }
  const error = record.error as Record<string, unknown> | undefined
  if (typeof error !== 'object' || error === null) return `a ${status} without error`
  if (typeof error.code !== 'string' || typeof error.message !== 'string') return `a ${status} without code or message`
  return error.status === status ? undefined : `error.status ${String(error.status)} for HTTP ${status}`
}
