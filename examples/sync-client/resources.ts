import type { components, operations, webhooks } from './api-types.js'
import { ApiError, dataOf, type WorkforceClient } from './client.js'
import { readOnce, type ReadAnswer } from './conditional.js'

type Schemas = components['schemas']

/** What the mirror needs of any record: every resource has both (docs/api.md 3). */
export interface SyncedRecord {
  id: number
  updated_at: string
}

export type ListResourceName = 'users' | 'employees' | 'roles' | 'projects' | 'shifts' | 'absences' | 'expenses' | 'todos'
export type ResourceName = 'company' | ListResourceName

/** Every event type the API documents (its webhooks), e.g. `shifts.deleted`. */
export type EventType = keyof webhooks

/** One event of `GET /v1/events`: the body its webhook delivery carries. */
export type FeedEvent = operations['listEvents']['responses'][200]['content']['application/json']['data'][number]
export type FeedPage = operations['listEvents']['responses'][200]['content']['application/json']

/** A keyset request: the records with an id above `starting_after` (0: from the first). A type, so it is a `Question`'s query record. */
export type KeysetQuery = {
  starting_after: number
  per_page: number
}

export interface Page {
  data: SyncedRecord[]
  pagination: Schemas['Pagination']
}

/** A list resource and the typed call the sync makes on it. */
export interface ListResource {
  name: ListResourceName
  /**
   * The event types that tell its changes, its deletions included. None for roles, which have
   * no events: they are read whole, by keyset, on every run.
   */
  events: readonly EventType[]
  /** One keyset page, sent by `read`: once (`readOnce`, the default), or asked again (`ConditionalReads`). */
  list(api: WorkforceClient, query: KeysetQuery, read?: ReadAnswer): Promise<Page>
}

/** A list resource's events: created, updated and deleted (checked against the document's event types). */
const lifecycle = (name: Exclude<ListResourceName, 'roles'>): readonly EventType[] => [`${name}.created`, `${name}.updated`, `${name}.deleted`]

/** Every list resource, in the order a full sync reads them. */
export const LIST_RESOURCES: readonly ListResource[] = [
  { name: 'users', events: lifecycle('users'), list: (api, query, read = readOnce) => read({ path: '/v1/users', query }, (header) => api.GET('/v1/users', { params: { query, header } })) },
  { name: 'employees', events: lifecycle('employees'), list: (api, query, read = readOnce) => read({ path: '/v1/employees', query }, (header) => api.GET('/v1/employees', { params: { query, header } })) },
  { name: 'roles', events: [], list: (api, query, read = readOnce) => read({ path: '/v1/roles', query }, (header) => api.GET('/v1/roles', { params: { query, header } })) },
  { name: 'projects', events: lifecycle('projects'), list: (api, query, read = readOnce) => read({ path: '/v1/projects', query }, (header) => api.GET('/v1/projects', { params: { query, header } })) },
  { name: 'shifts', events: lifecycle('shifts'), list: (api, query, read = readOnce) => read({ path: '/v1/shifts', query }, (header) => api.GET('/v1/shifts', { params: { query, header } })) },
  { name: 'absences', events: lifecycle('absences'), list: (api, query, read = readOnce) => read({ path: '/v1/absences', query }, (header) => api.GET('/v1/absences', { params: { query, header } })) },
  { name: 'expenses', events: lifecycle('expenses'), list: (api, query, read = readOnce) => read({ path: '/v1/expenses', query }, (header) => api.GET('/v1/expenses', { params: { query, header } })) },
  { name: 'todos', events: lifecycle('todos'), list: (api, query, read = readOnce) => read({ path: '/v1/todos', query }, (header) => api.GET('/v1/todos', { params: { query, header } })) },
]

/** The company's own event: it has no list, and is never created or deleted through the API. */
export const COMPANY_EVENTS: readonly EventType[] = ['company.updated']

/** Every resource name, the company first. */
export const RESOURCE_NAMES: readonly ResourceName[] = ['company', ...LIST_RESOURCES.map((r) => r.name)]

/** The resource an event is about: its type's prefix (`shifts.deleted` → `shifts`), or null for one this client does not mirror. */
export function resourceOfEvent(type: string): ResourceName | null {
  const prefix = type.slice(0, type.indexOf('.'))
  return (RESOURCE_NAMES as readonly string[]).includes(prefix) ? (prefix as ResourceName) : null
}

/** Whether an event removes its record (`data.id`) rather than giving its new state. */
export function isDeletion(type: string): boolean {
  return type.endsWith('.deleted')
}

/** The key's own company (`GET /v1/company`): no list, no lookup by id. Asked every run, so `read` may ask it again (`ConditionalReads`). */
export async function fetchCompany(api: WorkforceClient, read: ReadAnswer = readOnce): Promise<Schemas['Company']> {
  return (await read({ path: '/v1/company' }, (header) => api.GET('/v1/company', { params: { header } }))).data
}

/** `GET /v1/events/cursor`: the feed position now. Taken before a full read, the feed from it holds every change the read may have missed. */
export async function fetchFeedCursor(api: WorkforceClient): Promise<string> {
  return dataOf(await api.GET('/v1/events/cursor'), 'GET /v1/events/cursor').data.cursor
}

/** The code of the 410 that answers a cursor older than the retained events: the copy must be rebuilt from scratch. */
export const CURSOR_EXPIRED = 'cursor_expired'

/**
 * One page of `GET /v1/events` after `cursor`, only `types` (sent explicitly, so a key that
 * cannot read one of them is refused with a 403 instead of silently shown fewer events).
 * Throws an `ApiError` with `code` `cursor_expired` (410) when the cursor is past retention.
 *
 * Only an idle answer is kept to be asked again (`read`): one whose `next_cursor` is the cursor
 * asked after, so the next poll asks this very question; an answer that moved the cursor on will
 * not be asked for again.
 */
export async function fetchEvents(api: WorkforceClient, feed: { after: string; types: readonly EventType[]; limit: number }, read: ReadAnswer = readOnce): Promise<FeedPage> {
  const query = { after: feed.after, types: feed.types.join(','), limit: feed.limit }
  return read(
    { path: '/v1/events', query },
    (header) => api.GET('/v1/events', { params: { query, header } }),
    (page) => !page.has_more && page.next_cursor === feed.after,
  )
}

export function isCursorExpired(error: unknown): boolean {
  return error instanceof ApiError && error.status === 410 && error.code === CURSOR_EXPIRED
}
