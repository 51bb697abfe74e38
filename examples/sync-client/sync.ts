import type { ApiClient } from './client.js'
import type { Mirror, SyncMode } from './mirror.js'
import { fetchCompany, LIST_RESOURCES, type ListResource, type ResourceName } from './resources.js'

/**
 * How far before the previous sync's start the next `updated_since` begins (ms). It covers the
 * client's clock running ahead of the server's, and a write stamped a moment before it commits,
 * which a read in that moment cannot see yet (README, "Why the overlap").
 */
export const DEFAULT_OVERLAP_MS = 5_000
/** The largest page the API gives (docs/api.md 4). */
export const PER_PAGE = 100

export interface SyncOptions {
  /** Read every record, even where a previous sync's start is stored, and drop rows the API no longer has. */
  full?: boolean
  /** Default 5,000 ms. */
  overlapMs?: number
  /** Default 100. */
  perPage?: number
  /** Milliseconds since the epoch: the clock each sync start is read from. Default `Date.now`. */
  now?: () => number
  /** Only these resources, the company always included. Default: every resource. */
  resources?: readonly ResourceName[]
  progress?: SyncProgress
}

/** Told as each page is applied, e.g. to draw a progress bar. */
export interface SyncProgress {
  /** `fetched` records of `resource` read so far, of `total` (`pagination.total`, which can grow while paging). */
  page(resource: ResourceName, fetched: number, total: number): void
}

export interface ResourceReport {
  resource: ResourceName
  mode: SyncMode
  /** The `updated_since` sent, for an incremental read. */
  updatedSince: string | null
  /** Records received. */
  fetched: number
  pages: number
  /** Mirror rows inserted or replaced. */
  changed: number
  /** Mirror rows removed because the API no longer has them (full reads only). */
  removed: number
}

export interface SyncReport {
  resources: ResourceReport[]
  requests: number
  retries: number
  elapsedMs: number
}

/** The mirror was filled with another company's data than the key's. */
export class MirrorMismatchError extends Error {
  override readonly name = 'MirrorMismatchError'
}

/**
 * Brings `mirror` up to date: the company, then each list resource, one after the other. A
 * resource synced before is read incrementally (`updated_since` = its last start minus the
 * overlap) unless `full`; the first sync, a `full` one and roles (no `updated_since` filter)
 * read every page, and then also drop rows the API no longer lists. A resource's start is
 * stored only once all its pages are applied, so an interrupted sync is redone from the old one.
 *
 * @example
 * const client = createApiClient({ baseUrl: 'http://127.0.0.1:3000/api/public', key })
 * const mirror = Mirror.open('mirror.db')
 * const report = await syncMirror(client, mirror)
 */
export async function syncMirror(client: ApiClient, mirror: Mirror, options: SyncOptions = {}): Promise<SyncReport> {
  const now = options.now ?? Date.now
  const began = performance.now()
  const before = { ...client.stats }
  const wanted = new Set(options.resources ?? ['company', ...LIST_RESOURCES.map((r) => r.name)])
  const reports = [await syncCompany(client, mirror, now, options.progress)]
  for (const resource of LIST_RESOURCES) {
    if (wanted.has(resource.name)) reports.push(await syncList(client, mirror, resource, { ...options, now }))
  }
  return {
    resources: reports,
    requests: client.stats.requests - before.requests,
    retries: client.stats.retries - before.retries,
    elapsedMs: performance.now() - began,
  }
}

async function syncCompany(client: ApiClient, mirror: Mirror, now: () => number, progress: SyncProgress | undefined): Promise<ResourceReport> {
  const startedAt = new Date(now()).toISOString()
  const company = await fetchCompany(client.api)
  const held = mirror.companyId()
  if (held !== null && held !== company.id) {
    throw new MirrorMismatchError(`the mirror holds company ${held}'s data, and this key is company ${company.id}'s: use another --db`)
  }
  const changed = mirror.apply('company', [company])
  progress?.page('company', 1, 1)
  mirror.completeSync('company', { startedAt, finishedAt: new Date(now()).toISOString(), mode: 'full' })
  return { resource: 'company', mode: 'full', updatedSince: null, fetched: 1, pages: 1, changed, removed: 0 }
}

async function syncList(
  client: ApiClient,
  mirror: Mirror,
  resource: ListResource,
  options: SyncOptions & { now: () => number },
): Promise<ResourceReport> {
  const { api } = client
  const name = resource.name
  const previous = mirror.syncState(name)
  const updatedSince =
    resource.incremental && options.full !== true && previous !== null
      ? new Date(Date.parse(previous.startedAt) - (options.overlapMs ?? DEFAULT_OVERLAP_MS)).toISOString()
      : null
  const mode: SyncMode = updatedSince === null ? 'full' : 'incremental'
  // Before the first request: anything written after this instant is in the next window.
  const startedAt = new Date(options.now()).toISOString()
  const perPage = options.perPage ?? PER_PAGE
  const seen = new Set<number>()
  const report: ResourceReport = { resource: name, mode, updatedSince, fetched: 0, pages: 0, changed: 0, removed: 0 }

  for (let page = 1; ; page++) {
    const { data, pagination } = await resource.list(api, { page, per_page: perPage, ...(updatedSince === null ? {} : { updated_since: updatedSince }) })
    report.pages++
    report.fetched += data.length
    report.changed += mirror.apply(name, data)
    for (const record of data) seen.add(record.id)
    options.progress?.page(name, report.fetched, Math.max(pagination.total, report.fetched))
    if (page >= pagination.total_pages) break
  }

  if (mode === 'full') {
    // Rows the listing did not return are gone, unless a deletion during paging shifted them
    // past a page boundary: each is checked by id before it is dropped.
    const gone: number[] = []
    for (const id of mirror.ids(name)) {
      if (seen.has(id)) continue
      const record = await resource.get(api, id)
      if (record === null) gone.push(id)
      else {
        report.fetched++
        report.changed += mirror.apply(name, [record])
      }
    }
    report.removed = mirror.remove(name, gone)
  }

  mirror.completeSync(name, { startedAt, finishedAt: new Date(options.now()).toISOString(), mode })
  return report
}
