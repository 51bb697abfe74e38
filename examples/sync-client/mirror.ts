import Database from 'better-sqlite3'
import { RESOURCE_NAMES, type ResourceName, type SyncedRecord } from './resources.js'

/** How a resource was last read: every record, or those changed since a point in time. */
export type SyncMode = 'full' | 'incremental'

/** The last completed sync of a resource. */
export interface SyncState {
  /** When it started, before its first request (ISO, `Z`): the next `updated_since` is this minus the overlap. */
  startedAt: string
  finishedAt: string
  mode: SyncMode
}

/**
 * A local SQLite copy of one company's data: a table per resource (`id`, `updated_at`, and the
 * record's JSON as the API returned it) and `sync_state`, the start of each resource's last
 * completed sync. Records are applied by id and only ever replaced by one at least as new, so
 * applying a page twice, or an older copy after a newer one, changes nothing (docs/api.md 4).
 *
 * @example
 * const mirror = Mirror.open('mirror.db')
 * mirror.apply('todos', page.data)
 * mirror.close()
 */
export class Mirror {
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
    const statement = this.#db.prepare(
      `INSERT INTO ${table(resource)} (id, updated_at, record) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, record = excluded.record
       WHERE excluded.updated_at >= ${table(resource)}.updated_at AND excluded.record <> ${table(resource)}.record`,
    )
    return this.#db.transaction(() => {
      let changed = 0
      for (const record of records) changed += statement.run(record.id, record.updated_at, JSON.stringify(record)).changes
      return changed
    })()
  }

  /** Removes the rows with these ids; returns how many there were. */
  remove(resource: ResourceName, ids: readonly number[]): number {
    const statement = this.#db.prepare(`DELETE FROM ${table(resource)} WHERE id = ?`)
    return this.#db.transaction(() => ids.reduce((removed, id) => removed + statement.run(id).changes, 0))()
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

  syncState(resource: ResourceName): SyncState | null {
    const row = this.#db.prepare('SELECT started_at, finished_at, mode FROM sync_state WHERE resource = ?').get(resource) as
      | { started_at: string; finished_at: string; mode: SyncMode }
      | undefined
    return row === undefined ? null : { startedAt: row.started_at, finishedAt: row.finished_at, mode: row.mode }
  }

  /** Records a completed sync of `resource`; an interrupted one records nothing and is redone from the old start. */
  completeSync(resource: ResourceName, state: SyncState): void {
    this.#db
      .prepare(
        `INSERT INTO sync_state (resource, started_at, finished_at, mode) VALUES (?, ?, ?, ?)
         ON CONFLICT (resource) DO UPDATE SET started_at = excluded.started_at, finished_at = excluded.finished_at, mode = excluded.mode`,
      )
      .run(resource, state.startedAt, state.finishedAt, state.mode)
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
  'CREATE TABLE IF NOT EXISTS sync_state (resource TEXT PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT NOT NULL, mode TEXT NOT NULL) STRICT;',
].join('\n')

/** A resource's table, quoted; only names from `RESOURCE_NAMES` ever reach SQL. */
function table(resource: ResourceName): string {
  if (!RESOURCE_NAMES.includes(resource)) throw new TypeError(`not a resource: ${String(resource)}`)
  return `"${resource}"`
}
