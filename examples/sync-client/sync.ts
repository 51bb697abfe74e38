import { ApiError, type ApiClient } from './client.js'
import { ConditionalReads, readOnce, type ReadAnswer } from './conditional.js'
import type { Mirror } from './mirror.js'
import {
  COMPANY_EVENTS,
  fetchCompany,
  fetchEvents,
  fetchFeedCursor,
  isCursorExpired,
  LIST_RESOURCES,
  resourceOfEvent,
  type EventType,
  type ListResource,
  type ResourceName,
} from './resources.js'

/** The largest page of a list the API gives (docs/api.md 4). */
export const PER_PAGE = 100
/** Events asked for per feed request (the API allows up to 1,000). */
export const FEED_LIMIT = 500

export interface SyncOptions {
  /** Start again from scratch: a new cursor, then every list read whole. */
  full?: boolean
  /** Records per list page. Default 100. */
  perPage?: number
  /** Events per feed page. Default 500. */
  feedLimit?: number
  /** Only these resources, the company always included. Default: every resource. A change of the set starts again from scratch. */
  resources?: readonly ResourceName[]
  progress?: SyncProgress
  /** Told, in a sentence, what the sync had to do that a user should know of (a re-sync from scratch). */
  log?: (line: string) => void
}

/** Told as each page is applied, e.g. to draw a progress bar. */
export interface SyncProgress {
  /** `fetched` records of `resource` (or events, for `events`) read so far, of about `total`. */
  page(resource: ResourceName | 'events', fetched: number, total: number): void
}

/** How a resource was brought up to date: its list read (whole or resumed), or only the feed's events. */
export type SyncMode = 'list' | 'feed'

export interface ResourceReport {
  resource: ResourceName
  mode: SyncMode
  /** Records received from its list (or `GET /v1/company`), those of a kept answer (a 304) included. */
  fetched: number
  pages: number
  /** Events of the feed applied to it. */
  events: number
  /** Mirror rows inserted or replaced. */
  changed: number
  /** Mirror rows removed: told by a `*.deleted` event, or missing from a full read. */
  removed: number
}

/** Why this run read the lists from scratch, or null when it only followed the feed. */
export type FullSyncReason = 'first' | 'requested' | 'resources' | 'expired' | 'resumed'

export interface SyncReport {
  fullSync: FullSyncReason | null
  resources: ResourceReport[]
  /** The feed requests made and the cursor the mirror is now at. */
  feed: { pages: number; events: number; cursor: string }
  requests: number
  retries: number
  /**
   * Answers that came back `304 Not Modified` (the company, a roles page, the feed's idle head):
   * the kept copy was used, and the request spent no rate budget. Counted in `requests` too.
   */
  notModified: number
  elapsedMs: number
}

/** The mirror was filled with another company's data than the key's. */
export class MirrorMismatchError extends Error {
  override readonly name = 'MirrorMismatchError'
}

/** Said when the API answers 410 `cursor_expired`. */
export const CURSOR_EXPIRED_NOTICE =
  'the stored cursor has expired (410 cursor_expired): the API no longer keeps every event after it, so this mirror must be re-synced from scratch; doing so now'

/**
 * Brings `mirror` up to date. The first time (or with `full`, or after a 410 `cursor_expired`)
 * it takes `GET /v1/events/cursor` first, then reads every list by keyset (`starting_after`),
 * then applies the feed from that cursor. Later runs apply the feed from the stored cursor,
 * saving the cursor after each page. Roles have no events and are read whole every run. Every
 * step resumes after a crash: a full read from its last page, the feed from its last saved
 * cursor (events applied twice change nothing). What it asks every run (the company, the roles'
 * pages, the feed at its head) it asks with `If-None-Match`, and a 304 costs no rate budget.
 *
 * @example
 * const client = createApiClient({ baseUrl: 'http://127.0.0.1:3000/api/public', key })
 * const mirror = Mirror.open('mirror.db')
 * const report = await syncMirror(client, mirror)
 */
export async function syncMirror(client: ApiClient, mirror: Mirror, options: SyncOptions = {}): Promise<SyncReport> {
  const began = performance.now()
  const before = { ...client.stats }
  const wanted = wantedResources(options.resources)
  const reports = new Map<ResourceName, ResourceReport>(wanted.map((name) => [name, { resource: name, mode: 'feed', fetched: 0, pages: 0, events: 0, changed: 0, removed: 0 }]))
  const report = (name: ResourceName) => reports.get(name) as ResourceReport

  const state = mirror.feedState()
  let reason: FullSyncReason | null =
    state === null ? 'first' : options.full === true ? 'requested' : !sameSet(state.resources, wanted) ? 'resources' : state.listed ? null : 'resumed'
  let feed = { pages: 0, events: 0, cursor: state?.cursor ?? '' }
  const conditional = new ConditionalReads(mirror)

  for (let attempt = 1; ; attempt++) {
    try {
      // A new full sync takes a new cursor; a resumed one keeps the cursor it took first.
      await syncCompany(client, mirror, conditional.read, report('company'), reason === null || reason === 'resumed' ? null : wanted)
      const walked = reason === null ? new Set<ResourceName>() : await readLists(client, mirror, conditional.read, wanted, reports, options)
      for (const resource of LIST_RESOURCES) {
        // No events tell of their changes: read whole on every run.
        if (resource.events.length === 0 && wanted.includes(resource.name) && !walked.has(resource.name)) {
          await walkList(client, mirror, resource, conditional.read, 0, report(resource.name), options)
        }
      }
      feed = await followFeed(client, mirror, conditional.read, wanted, reports, options)
      break
    } catch (error) {
      // Once only: a fresh cursor that expires at once means retention is shorter than a sync.
      if (!isCursorExpired(error) || attempt > 1) throw error
      options.log?.(CURSOR_EXPIRED_NOTICE)
      reason = 'expired'
    }
  }
  conditional.finish()

  return {
    fullSync: reason,
    resources: [...reports.values()],
    feed,
    requests: client.stats.requests - before.requests,
    retries: client.stats.retries - before.retries,
    notModified: conditional.notModified,
    elapsedMs: performance.now() - began,
  }
}

/**
 * `GET /v1/company`, checked against the company the mirror holds. Starting a full sync
 * (`fresh`: the resources it covers), the cursor is taken before the company is read, and stored
 * only once the key is known to be this mirror's company's.
 */
async function syncCompany(client: ApiClient, mirror: Mirror, read: ReadAnswer, report: ResourceReport, fresh: readonly ResourceName[] | null): Promise<void> {
  const cursor = fresh === null ? null : await fetchFeedCursor(client.api)
  const company = await fetchCompany(client.api, read)
  const held = mirror.companyId()
  if (held !== null && held !== company.id) {
    throw new MirrorMismatchError(`the mirror holds company ${held}'s data, and this key is company ${company.id}'s: use another --db`)
  }
  if (cursor !== null && fresh !== null) {
    mirror.beginFullSync(cursor, fresh, fresh.filter((name) => name !== 'company'))
    report.mode = 'list'
  }
  report.fetched += 1
  report.pages += 1
  report.changed += mirror.apply('company', [company])
}

/** The full read: every list whose walk is not finished, each from where it stopped. Returns the lists it read. */
async function readLists(client: ApiClient, mirror: Mirror, read: ReadAnswer, wanted: readonly ResourceName[], reports: Map<ResourceName, ResourceReport>, options: SyncOptions): Promise<Set<ResourceName>> {
  const walked = new Set<ResourceName>()
  for (const resource of LIST_RESOURCES) {
    if (!wanted.includes(resource.name)) continue
    const position = mirror.walkPosition(resource.name)
    if (position === null) continue
    await walkList(client, mirror, resource, read, position, reports.get(resource.name) as ResourceReport, options)
    walked.add(resource.name)
  }
  mirror.completeFullSync()
  return walked
}

/**
 * Reads `resource` by keyset from `after` to its end. Each page replaces the mirror's rows in
 * the id range it covers, so a record missing from the list is removed, and a deletion during
 * the walk cannot hide a record that still exists (ids never shift as offsets do).
 *
 * Only a resource read whole every run (no events) asks its pages again with `read`; the others
 * are walked once, then followed by the feed, so their pages are sent plainly and not kept.
 */
async function walkList(client: ApiClient, mirror: Mirror, resource: ListResource, read: ReadAnswer, after: number, report: ResourceReport, options: SyncOptions): Promise<void> {
  report.mode = 'list'
  const perPage = options.perPage ?? PER_PAGE
  const readPage = resource.events.length === 0 ? read : readOnce
  for (;;) {
    const { data, pagination } = await resource.list(client.api, { starting_after: after, per_page: perPage }, readPage)
    const { has_more: more, next_starting_after: next } = pagination
    if (more === undefined || next === undefined) {
      throw new ApiError(`GET /v1/${resource.name}`, 200, null, 'the answer has no pagination.has_more: this API does not page by starting_after')
    }
    const applied = mirror.applyListPage(resource.name, data, after, more ? next : null)
    report.pages++
    report.fetched += data.length
    report.changed += applied.changed
    report.removed += applied.removed
    options.progress?.page(resource.name, report.fetched, Math.max(pagination.total, report.fetched))
    if (!more) return
    after = next
  }
}

/**
 * Applies the feed from the stored cursor until it has no more: each page in one transaction,
 * then its `next_cursor` saved. A crash between the two re-reads that page next time, and
 * applying its events again changes nothing.
 */
async function followFeed(client: ApiClient, mirror: Mirror, read: ReadAnswer, wanted: readonly ResourceName[], reports: Map<ResourceName, ResourceReport>, options: SyncOptions) {
  const types = eventTypes(wanted)
  const limit = options.feedLimit ?? FEED_LIMIT
  let cursor = mirror.feedState()?.cursor as string
  let pages = 0
  let events = 0
  for (;;) {
    const page = await fetchEvents(client.api, { after: cursor, types, limit }, read)
    for (const [resource, applied] of mirror.applyEvents(page.data)) {
      const report = reports.get(resource)
      if (report === undefined) continue
      report.changed += applied.changed
      report.removed += applied.removed
    }
    for (const event of page.data) {
      const resource = resourceOfEvent(event.type)
      const report = resource === null ? undefined : reports.get(resource)
      if (report !== undefined) report.events++
    }
    mirror.saveCursor(page.next_cursor)
    cursor = page.next_cursor
    pages++
    events += page.data.length
    options.progress?.page('events', events, events + (page.has_more ? limit : 0))
    if (!page.has_more) return { pages, events, cursor }
  }
}

/** The event types of `wanted`, sent as `types`: a key that cannot read one is refused (403) rather than shown fewer. */
export function eventTypes(wanted: readonly ResourceName[]): EventType[] {
  return [...COMPANY_EVENTS, ...LIST_RESOURCES.filter((r) => wanted.includes(r.name)).flatMap((r) => r.events)]
}

function wantedResources(resources: readonly ResourceName[] | undefined): ResourceName[] {
  const asked = new Set(resources ?? LIST_RESOURCES.map((r) => r.name))
  return ['company', ...LIST_RESOURCES.map((r) => r.name).filter((name) => asked.has(name))]
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item) => b.includes(item))
}
