/**
 * The smallest client that keeps a copy the way docs/api.md tells integrators to (issue 24):
 * the first pass takes `GET /v1/events/cursor`, reads every list, then every later pass follows
 * `GET /v1/events` from that cursor, upserting each event's `data` by id and removing on
 * `*.deleted`. It shares no code with examples/sync-client: the divergence test's controls run
 * it with `walk: 'page'` (the known-broken walk: a deletion during an offset walk shifts a record
 * past a page boundary) and with `walk: 'keyset'` beside it.
 */

/** The list resources a full read walks; roles have no events, but a copy holds them too. */
export const LIST_PATHS = ['users', 'employees', 'roles', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const
export type ListName = (typeof LIST_PATHS)[number]
/** Every resource a copy holds: the company (one record) and the lists. */
export type CopyName = 'company' | ListName

export interface CopiedRecord {
  id: number
  [field: string]: unknown
}

/** A copy: per resource, its records by id. */
export type Copy = Record<CopyName, Map<number, CopiedRecord>>

export function emptyCopy(): Copy {
  return Object.fromEntries(['company', ...LIST_PATHS].map((name) => [name, new Map()])) as Copy
}

/** Sends one GET and returns its JSON body, or throws naming the status and body. */
export type GetJson = (pathAndQuery: string) => Promise<unknown>

export interface MiniClientOptions {
  get: GetJson
  /** `keyset` (`starting_after`, the contract) or `page` (offset paging: misses records when rows are deleted meanwhile). */
  walk?: 'keyset' | 'page'
  perPage?: number
  feedLimit?: number
}

interface ListAnswer {
  data: CopiedRecord[]
  pagination: { total_pages: number; has_more?: boolean; next_starting_after?: number }
}
interface FeedAnswer {
  data: Array<{ type: string; data: CopiedRecord }>
  next_cursor: string
  has_more: boolean
}

export class MiniSyncClient {
  readonly copy: Copy = emptyCopy()
  #cursor: string | null = null
  readonly #walk: 'keyset' | 'page'
  readonly #perPage: number
  readonly #feedLimit: number

  constructor(private readonly options: MiniClientOptions) {
    this.#walk = options.walk ?? 'keyset'
    this.#perPage = options.perPage ?? 7
    this.#feedLimit = options.feedLimit ?? 13
  }

  /** One pass: the first reads everything (after taking the cursor), every pass then reads the feed to its end. */
  async syncOnce(): Promise<void> {
    if (this.#cursor === null) {
      // Taken before the lists: every change the lists might miss is in the feed after it.
      const cursor = ((await this.options.get('/v1/events/cursor')) as { data: { cursor: string } }).data.cursor
      const company = ((await this.options.get('/v1/company')) as { data: CopiedRecord }).data
      this.copy.company.set(company.id, company)
      for (const name of LIST_PATHS) {
        for (const record of await this.#readList(name)) this.copy[name].set(record.id, record)
      }
      this.#cursor = cursor
    }
    for (;;) {
      const page = (await this.options.get(`/v1/events?after=${this.#cursor}&limit=${this.#feedLimit}`)) as FeedAnswer
      for (const event of page.data) this.#apply(event)
      this.#cursor = page.next_cursor
      if (!page.has_more) return
    }
  }

  #apply(event: { type: string; data: CopiedRecord }): void {
    const [resource, action] = event.type.split('.') as [CopyName, string]
    const records = this.copy[resource]
    if (records === undefined) throw new Error(`an event of a resource the copy does not hold: ${event.type}`)
    if (action === 'deleted') records.delete(event.data.id)
    else records.set(event.data.id, event.data)
  }

  async #readList(name: ListName): Promise<CopiedRecord[]> {
    const records: CopiedRecord[] = []
    if (this.#walk === 'keyset') {
      let after = 0
      for (;;) {
        const answer = (await this.options.get(`/v1/${name}?per_page=${this.#perPage}&starting_after=${after}`)) as ListAnswer
        records.push(...answer.data)
        if (answer.pagination.has_more !== true) return records
        after = answer.pagination.next_starting_after as number
      }
    }
    for (let page = 1; ; page++) {
      const answer = (await this.options.get(`/v1/${name}?per_page=${this.#perPage}&page=${page}`)) as ListAnswer
      records.push(...answer.data)
      if (page >= answer.pagination.total_pages) return records
    }
  }
}
