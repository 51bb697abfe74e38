import Database from 'better-sqlite3'
import type { AnswerStore, KeptAnswer } from './conditional.js'
import { isDeletion, RESOURCE_NAMES, resourceOfEvent, type FeedEvent, type ResourceName, type SyncedRecord } from './resources.js'

/** Where the mirror stands with the events feed. */
export interface FeedState {
  /** Apply the feed's events after this cursor (`GET /v1/events?after=`). */
  cursor: string
  /** The resources the cursor covers: those the full read that took it was for. */
  resources: ResourceName[]
  /**
   * Whether that full read finished. Until it has, the cursor is only where the feed is to be
   * followed from once every list is read; a crash half-way resumes the read (`walkPosition`).
   */
  listed: boolean
}

/** What applying records or events did to the mirror's rows. */
export interface Applied {
  changed: number
  removed: number
}

/**
 * A local SQLite copy of one company's data: a table per resource (`id`, `updated_at`, and the
 * record's JSON as the API returned it), the feed cursor it is up to date with (`feed_state`),
 * where a full read in progress has got to (`list_walk`), and the answers the client asks for
 * again with `If-None-Match` (`kept_answer`, conditional.ts). Records are applied by id and only
 * ever replaced by one at least as new, so applying a page or an event twice, or an older copy
 * after a newer one, changes nothing (docs/api.md 4).
 *
 * @example
 * const mirror = Mirror.open('mirror.db')
 * mirror.applyEvents(page.data)
 * mirror.saveCursor(page.next_cursor)
 * mirror.close()
 */
export class Mirror implements AnswerStore {
  readonly #db: Database.Database

  private constructor(db: Database.Database) {
    this.#db = db
  }

  /** Opens (or creates) the mirror at `filename`; `:memory:` for one that lives as long as the object. */
  static open(filename: string): Mirror {
    const db = new Database(filename)
    try {
      db.pragma('journal_mode = WAL')
      db.exec(SCHEMA)
    } catch (error) {
      db.close()
      throw error
    }
    return new Mirror(db)
  }

  /**
   * Upserts `records` by id in one transaction, keeping for each id the copy with the newer
   * `updated_at` (timestamps are UTC with milliseconds and `Z`, spec 2.4, so they compare as
   * text). Returns how many rows changed: 0 when the page was applied before.
   */
  apply(resource: ResourceName, records: readonly SyncedRecord[]): number {
    return this.#db.transaction(() => this.#upsert(resource, records))()
  }

  /**
   * Applies one keyset page of a full read, in one transaction: upserts its records and removes
   * the mirror's rows in the id range the page covers that it does not hold, since the API has
   * no such record any more. The range is above `after` and up to `through` (the page's
   * `next_starting_after`), or without end for the last page (`through` null). Then records
   * `through` as where the walk of `resource` resumes, in the same transaction.
   */
  applyListPage(resource: ResourceName, records: readonly SyncedRecord[], after: number, through: number | null): Applied {
    const ids = this.#db.prepare(`SELECT id FROM ${table(resource)} WHERE id > ? AND (? IS NULL OR id <= ?)`).pluck()
    const remove = this.#db.prepare(`DELETE FROM ${table(resource)} WHERE id = ?`)
    const move = this.#db.prepare('UPDATE list_walk SET after = ?, done = ? WHERE resource = ?')
    return this.#db.transaction(() => {
      const listed = new Set(records.map((record) => record.id))
      const gone = (ids.all(after, through, through) as number[]).filter((id) => !listed.has(id))
      const removed = gone.reduce((sum, id) => sum + remove.run(id).changes, 0)
      const changed = this.#upsert(resource, records)
      move.run(through ?? after, through === null ? 1 : 0, resource)
      return { changed, removed }
    })()
  }

  /**
   * Applies a page of the events feed in order, in one transaction: a `*.deleted` event removes
   * the record `data.id`, any other upserts `data` (kept only if at least as new as the row).
   * Events of resources this mirror does not keep are skipped. Returns what changed, per resource.
   */
  applyEvents(events: readonly FeedEvent[]): Map<ResourceName, Applied> {
    return this.#db.transaction(() => {
      const applied = new Map<ResourceName, Applied>()
      for (const event of events) {
        const resource = resourceOfEvent(event.type)
        if (resource === null) continue
        const record = event.data as unknown as SyncedRecord
        const counts = applied.get(resource) ?? { changed: 0, removed: 0 }
        if (isDeletion(event.type)) counts.removed += this.#db.prepare(`DELETE FROM ${table(resource)} WHERE id = ?`).run(record.id).changes
        else counts.changed += this.#upsert(resource, [record])
        applied.set(resource, counts)
      }
      return applied
    })()
  }

  #upsert(resource: ResourceName, records: readonly SyncedRecord[]): number {
    const statement = this.#db.prepare(
      `INSERT INTO ${table(resource)} (id, updated_at, record) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, record = excluded.record
       WHERE excluded.updated_at >= ${table(resource)}.updated_at AND excluded.record <> ${table(resource)}.record`,
    )
    let changed = 0
    for (const record of records) changed += statement.run(record.id, record.updated_at, JSON.stringify(record)).changes
    return changed
  }

  /** The ids of `resource` in the mirror, ascending. */
  ids(resource: ResourceName): number[] {
    return this.#db
      .prepare(`SELECT id FROM ${table(resource)} ORDER BY id`)
      .pluck()
      .all() as number[]
  }

  /** The records of `resource`, ascending by id, parsed from the stored JSON. */
  records(resource: ResourceName): SyncedRecord[] {
    const rows = this.#db.prepare(`SELECT record FROM ${table(resource)} ORDER BY id`).pluck().all() as string[]
    return rows.map((row) => JSON.parse(row) as SyncedRecord)
  }

  /** The feed cursor and what it covers, or null before the first sync. */
  feedState(): FeedState | null {
    const row = this.#db.prepare('SELECT cursor, resources, listed FROM feed_state').get() as { cursor: string; resources: string; listed: number } | undefined
    return row === undefined ? null : { cursor: row.cursor, resources: JSON.parse(row.resources) as ResourceName[], listed: row.listed === 1 }
  }

  /**
   * Starts a full read from `cursor` (taken before it): the feed is to be followed from there,
   * and each of `lists` is to be read from its first record. Replaces any earlier state.
   */
  beginFullSync(cursor: string, resources: readonly ResourceName[], lists: readonly ResourceName[]): void {
    this.#db.transaction(() => {
      this.#db.prepare('DELETE FROM feed_state').run()
      this.#db.prepare('INSERT INTO feed_state (cursor, resources, listed) VALUES (?, ?, 0)').run(cursor, JSON.stringify(resources))
      this.#db.prepare('DELETE FROM list_walk').run()
      const walk = this.#db.prepare('INSERT INTO list_walk (resource, after, done) VALUES (?, 0, 0)')
      for (const resource of lists) walk.run(resource)
    })()
  }

  /** Where the full read of `resource` resumes (`starting_after`), or null if it has none to do. */
  walkPosition(resource: ResourceName): number | null {
    const row = this.#db.prepare('SELECT after, done FROM list_walk WHERE resource = ?').get(resource) as { after: number; done: number } | undefined
    return row === undefined || row.done === 1 ? null : row.after
  }

  /** Every list is read: from now on the mirror follows the feed. */
  completeFullSync(): void {
    this.#db.transaction(() => {
      this.#db.prepare('UPDATE feed_state SET listed = 1').run()
      this.#db.prepare('DELETE FROM list_walk').run()
    })()
  }

  /** Stores the cursor the mirror is now up to date with: call it only once the events before it are applied. */
  saveCursor(cursor: string): void {
    this.#db.prepare('UPDATE feed_state SET cursor = ?').run(cursor)
  }

  keptAnswer(key: string): KeptAnswer | null {
    const row = this.#db.prepare('SELECT etag, body FROM kept_answer WHERE request = ?').get(key) as KeptAnswer | undefined
    return row ?? null
  }

  keepAnswer(key: string, answer: KeptAnswer): void {
    this.#db
      .prepare('INSERT INTO kept_answer (request, etag, body) VALUES (?, ?, ?) ON CONFLICT (request) DO UPDATE SET etag = excluded.etag, body = excluded.body')
      .run(key, answer.etag, answer.body)
  }

  forgetAnswer(key: string): void {
    this.#db.prepare('DELETE FROM kept_answer WHERE request = ?').run(key)
  }

  keepOnlyAnswers(keys: readonly string[]): void {
    this.#db.prepare('DELETE FROM kept_answer WHERE request NOT IN (SELECT value FROM json_each(?))').run(JSON.stringify(keys))
  }

  /** The questions whose answers are kept, in order (for tests and a curious user). */
  keptQuestions(): string[] {
    return this.#db.prepare('SELECT request FROM kept_answer ORDER BY request').pluck().all() as string[]
  }

  /** The company whose data this mirror holds, once a sync has read it. */
  companyId(): number | null {
    const id = this.#db.prepare('SELECT id FROM company ORDER BY id LIMIT 1').pluck().get() as number | undefined
    return id ?? null
  }

  close(): void {
    this.#db.close()
  }
}

const SCHEMA = [
  ...RESOURCE_NAMES.map((name) => `CREATE TABLE IF NOT EXISTS ${table(name)} (id INTEGER PRIMARY KEY, updated_at TEXT NOT NULL, record TEXT NOT NULL) STRICT;`),
  'CREATE TABLE IF NOT EXISTS feed_state (cursor TEXT NOT NULL, resources TEXT NOT NULL, listed INTEGER NOT NULL) STRICT;',
  'CREATE TABLE IF NOT EXISTS list_walk (resource TEXT PRIMARY KEY, after INTEGER NOT NULL, done INTEGER NOT NULL) STRICT;',
  // Only the questions asked again every run (the company, the roles' pages, the feed's idle
  // head), one row each: the big list walks are read once, and their bodies are not kept.
  'CREATE TABLE IF NOT EXISTS kept_answer (request TEXT PRIMARY KEY, etag TEXT NOT NULL, body TEXT NOT NULL) STRICT;',
  // The windows of updated_since that mirrors made before the feed: without a cursor, such a
  // mirror is synced again from scratch, which also drops the records deleted since.
  'DROP TABLE IF EXISTS sync_state;',
].join('\n')

/** A resource's table, quoted; only names from `RESOURCE_NAMES` ever reach SQL. */
function table(resource: ResourceName): string {
  if (!RESOURCE_NAMES.includes(resource)) throw new TypeError(`not a resource: ${String(resource)}`)
  return `"${resource}"`
}
