import type { components } from './api-types.js'
import { dataOf, type WorkforceClient } from './client.js'

type Schemas = components['schemas']

/** What the mirror needs of any record: every resource has both (docs/api.md 3). */
export interface SyncedRecord {
  id: number
  updated_at: string
}

export type ListResourceName = 'users' | 'employees' | 'roles' | 'projects' | 'shifts' | 'absences' | 'expenses' | 'todos'
export type ResourceName = 'company' | ListResourceName

export interface PageQuery {
  page: number
  per_page: number
  /** Ignored by a list without the filter (roles). */
  updated_since?: string
}

export interface Page {
  data: SyncedRecord[]
  pagination: Schemas['Pagination']
}

/** A list resource and the typed calls the sync makes on it. */
export interface ListResource {
  name: ListResourceName
  /** Whether the list takes `updated_since`; `/v1/roles` does not, so roles are read whole every time. */
  incremental: boolean
  list(api: WorkforceClient, query: PageQuery): Promise<Page>
  /** The record by id, or null when the API no longer has it (404). */
  get(api: WorkforceClient, id: number): Promise<SyncedRecord | null>
}

/** Every list resource, in the order a sync reads them. */
export const LIST_RESOURCES: readonly ListResource[] = [
  {
    name: 'users',
    incremental: true,
    list: async (api, query) => dataOf(await api.GET('/v1/users', { params: { query } }), 'GET /v1/users'),
    get: async (api, id) => recordOrNull(await api.GET('/v1/users/{id}', { params: { path: { id } } }), `GET /v1/users/${id}`),
  },
  {
    name: 'employees',
    incremental: true,
    list: async (api, query) => dataOf(await api.GET('/v1/employees', { params: { query } }), 'GET /v1/employees'),
    get: async (api, id) => recordOrNull(await api.GET('/v1/employees/{id}', { params: { path: { id } } }), `GET /v1/employees/${id}`),
  },
  {
    name: 'roles',
    incremental: false,
    list: async (api, { page, per_page }) => dataOf(await api.GET('/v1/roles', { params: { query: { page, per_page } } }), 'GET /v1/roles'),
    get: async (api, id) => recordOrNull(await api.GET('/v1/roles/{id}', { params: { path: { id } } }), `GET /v1/roles/${id}`),
  },
  {
    name: 'projects',
    incremental: true,
    list: async (api, query) => dataOf(await api.GET('/v1/projects', { params: { query } }), 'GET /v1/projects'),
    get: async (api, id) => recordOrNull(await api.GET('/v1/projects/{id}', { params: { path: { id } } }), `GET /v1/projects/${id}`),
  },
  {
    name: 'shifts',
    incremental: true,
    list: async (api, query) => dataOf(await api.GET('/v1/shifts', { params: { query } }), 'GET /v1/shifts'),
    get: async (api, id) => recordOrNull(await api.GET('/v1/shifts/{id}', { params: { path: { id } } }), `GET /v1/shifts/${id}`),
  },
  {
    name: 'absences',
    incremental: true,
    list: async (api, query) => dataOf(await api.GET('/v1/absences', { params: { query } }), 'GET /v1/absences'),
    get: async (api, id) => recordOrNull(await api.GET('/v1/absences/{id}', { params: { path: { id } } }), `GET /v1/absences/${id}`),
  },
  {
    name: 'expenses',
    incremental: true,
    list: async (api, query) => dataOf(await api.GET('/v1/expenses', { params: { query } }), 'GET /v1/expenses'),
    get: async (api, id) => recordOrNull(await api.GET('/v1/expenses/{id}', { params: { path: { id } } }), `GET /v1/expenses/${id}`),
  },
  {
    name: 'todos',
    incremental: true,
    list: async (api, query) => dataOf(await api.GET('/v1/todos', { params: { query } }), 'GET /v1/todos'),
    get: async (api, id) => recordOrNull(await api.GET('/v1/todos/{id}', { params: { path: { id } } }), `GET /v1/todos/${id}`),
  },
]

/** Every resource name, the company first. */
export const RESOURCE_NAMES: readonly ResourceName[] = ['company', ...LIST_RESOURCES.map((r) => r.name)]

/** The key's own company (`GET /v1/company`): no list, no lookup by id. */
export async function fetchCompany(api: WorkforceClient): Promise<Schemas['Company']> {
  return dataOf(await api.GET('/v1/company'), 'GET /v1/company').data
}

function recordOrNull(result: { data?: { data: SyncedRecord }; error?: unknown; response: Response }, what: string): SyncedRecord | null {
  if (result.response.status === 404) return null
  return dataOf(result, what).data
}
