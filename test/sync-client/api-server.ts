import type { SqliteAdapter } from '../../adapters/sqlite/index.js'
import type { SyncedRecord } from '../../examples/sync-client/resources.js'
import type { Dataset } from '../../src/ports/dataset.js'
import { buildWriteApp, PREFIX, WRITE_ADAPTERS, type BuildWriteOptions, type WriteTestApp } from '../helpers/write-app.js'

/** The API over SQLite, writes enabled, listening on a loopback port. */
export interface ApiServer {
  t: WriteTestApp
  adapter: SqliteAdapter
  /** `http://127.0.0.1:<port>/api/public`: what the sync client is given. */
  baseUrl: string
  /** A key of company 1 with every scope. */
  key: string
  close(): Promise<void>
}

const sqlite = WRITE_ADAPTERS.find((factory) => factory.name === 'sqlite')
if (sqlite === undefined) throw new Error('the write adapters have no sqlite entry')

/** Starts the API over a fresh SQLite database holding `dataset` (default: the seed). */
export async function startApiServer(options: { dataset?: Dataset; options?: BuildWriteOptions['options'] } = {}): Promise<ApiServer> {
  const t = await buildWriteApp({ adapter: sqlite, ...(options.dataset === undefined ? {} : { dataset: options.dataset }), options: options.options ?? {} })
  try {
    const key = await t.keyFor(1, ['all'])
    const origin = await t.app.listen({ host: '127.0.0.1', port: 0 })
    return { t, adapter: t.adapter as SqliteAdapter, baseUrl: `${origin}${PREFIX}`, key, close: () => t.close() }
  } catch (error) {
    await t.close()
    throw error
  }
}

export interface Listing {
  records: SyncedRecord[]
  total: number
}

/**
 * Every record of a list, read page by page with plain `fetch` and `X-Api-Key`: the expected
 * answer, by a road that shares nothing with the client under test.
 */
export async function listAll(server: ApiServer, path: string, key: string = server.key): Promise<Listing> {
  const records: SyncedRecord[] = []
  let total = 0
  for (let page = 1; ; page++) {
    const res = await fetch(`${server.baseUrl}${path}?page=${page}&per_page=100`, { headers: { 'x-api-key': key } })
    if (res.status !== 200) throw new Error(`GET ${path} page ${page}: ${res.status} ${await res.text()}`)
    const body = (await res.json()) as { data: SyncedRecord[]; pagination: { total: number; total_pages: number } }
    records.push(...body.data)
    total = body.pagination.total
    if (page >= body.pagination.total_pages) return { records, total }
  }
}

/** `GET /v1/company`, the same way. */
export async function getCompany(server: ApiServer): Promise<SyncedRecord> {
  const res = await fetch(`${server.baseUrl}/v1/company`, { headers: { 'x-api-key': server.key } })
  if (res.status !== 200) throw new Error(`GET /v1/company: ${res.status}`)
  return ((await res.json()) as { data: SyncedRecord }).data
}
