import { once } from 'node:events'
import type { DatasetChunk } from '../../src/seed/generate.js'
import {
  LIST_VERSIONED,
  listVersionTrigger,
  listVersionUpsert,
  ListVersionTally,
  postgresRemovals,
  quoteIdentifier,
  walkBatches,
  type Batch,
  type LoadProgress,
} from '../sql/bulk-load.js'
import type { SqlCodec } from '../sql/codec.js'

/** Rows per COPY data message: about 150 KB of text, so the socket always has the next one. */
const ROWS_PER_MESSAGE = 1_000

/** The pg `Client` (or checked-out `PoolClient`) surface a bulk load uses. */
export interface PostgresBulkClient {
  query(config: { text: string; values?: unknown[] }): Promise<{ rows: any[] }>
}

/**
 * Loads streamed rows (`streamDataset`) into Postgres in one transaction, as
 * `loadSqliteDatasetStream` does into SQLite: all of it or none of it. Each table's rows go in
 * one `COPY … FROM STDIN`, as text the server parses with its fastest input path (no
 * statement, plan or parameter per row); this process makes and encodes the next rows while
 * the server stores the last ones. Each table's secondary indexes are dropped before its rows
 * and rebuilt after them; then every identity sequence moves past the largest id (as
 * `loadPostgresDataset` does, for the same reason: a row that brings its own id does not
 * advance the identity). Each listed table's list-version insert trigger is disabled meanwhile
 * and its counters bumped once per company afterwards (`ListVersionTally`). Works in the
 * connection's current schema.
 *
 * `client` is one connection the caller checked out, and releases.
 */
export async function loadPostgresDatasetStream(
  client: PostgresBulkClient,
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  progress: LoadProgress = {},
): Promise<void> {
  await client.query({ text: 'BEGIN' })
  try {
    // The pool's statement timeout bounds requests; a COPY of a million rows, or rebuilding an
    // index on them, may rightly take longer.
    await client.query({ text: "SET LOCAL statement_timeout = '0'" })
    await client.query({ text: "SET LOCAL maintenance_work_mem = '256MB'" })
    const tables: string[] = []
    const tally = new ListVersionTally()
    const owed = new Set<string>()
    let dropped: { name: string; definition: string }[] = []
    let trigger: string | undefined
    let copy: CopyFromStdin | undefined
    await walkBatches(codec, chunks, ROWS_PER_MESSAGE, progress, tally, {
      async tableStart(table, columns) {
        tables.push(table)
        dropped = await dropPostgresIndexes(client, table)
        trigger = await setAsideTrigger(client, table)
        const start = trigger === undefined ? undefined : await largestKeys(client, table)
        if (trigger !== undefined) owed.add(table)
        copy = new CopyFromStdin(`COPY ${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(', ')}) FROM STDIN`)
        ;(client as unknown as SubmittableClient).query(copy)
        await copy.ready
        return start
      },
      async batch(batch) {
        await copy!.write(copyText(batch))
      },
      async tableDone(table) {
        await copy!.end()
        copy = undefined
        for (const index of dropped) {
          await client.query({ text: index.definition })
          progress.indexBuilt?.(index.name)
        }
        dropped = []
        if (trigger !== undefined) await client.query({ text: `ALTER TABLE ${quoteIdentifier(table)} ENABLE TRIGGER ${quoteIdentifier(trigger)}` })
        trigger = undefined
      },
    }).catch(async (error: unknown) => {
      // A COPY still open must end before the connection can run anything else (ROLLBACK).
      await copy?.fail(error)
      throw error
    })
    for (const bump of tally.bumps().filter((counted) => owed.has(counted.table))) {
      await client.query({ text: listVersionUpsert((index) => `$${index + 1}`), values: [bump.companyId, bump.resource, bump.appends, postgresRemovals(bump), bump.appends] })
    }
    await restartIdentities(client, tables)
    progress.stage?.('committing')
    await client.query({ text: 'COMMIT' })
  } catch (error) {
    await client.query({ text: 'ROLLBACK' }).catch(() => {})
    throw error
  }
}

/**
 * Batch values as COPY text: one line per row, tab between fields, `\N` for null, `t`/`f` for
 * booleans, and backslash, tab, newline and carriage return escaped in strings.
 */
function copyText(batch: Batch): Buffer {
  const { values } = batch
  const width = batch.columns.length
  let text = ''
  for (let start = 0; start < values.length; start += width) {
    for (let column = 0; column < width; column++) {
      const value = values[start + column]
      if (column > 0) text += '\t'
      if (value === null || value === undefined) text += '\\N'
      else if (typeof value === 'string') text += SPECIAL.test(value) ? value.replace(SPECIALS, escape) : value
      else if (typeof value === 'boolean') text += value ? 't' : 'f'
      else text += String(value)
    }
    text += '\n'
  }
  return Buffer.from(text, 'utf8')
}

const SPECIAL = /[\\\t\n\r]/
const SPECIALS = /[\\\t\n\r]/g
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }
const escape = (character: string) => ESCAPES[character]!

// ---------------------------------------------------------------------------------------------
// COPY FROM STDIN over a pg client, without a dependency

/** The part of pg's `Connection` a COPY writes through (stable across pg 8). */
interface CopyConnection {
  query(text: string): void
  sendCopyFromChunk(chunk: Buffer): void
  endCopyFrom(): void
  sendCopyFail(message: string): void
  stream: NodeJS.WritableStream & { writableNeedDrain?: boolean }
}

/** pg's client takes any object with `submit` as a query and forwards the protocol to it. */
interface SubmittableClient {
  query(submittable: CopyFromStdin): unknown
}

/**
 * One `COPY … FROM STDIN` as a pg "submittable" (the interface pg-copy-streams uses): pg sends
 * its text, hands it the connection once the server is ready for data, and passes it the
 * server's answer. `write` waits while the socket's buffer is full.
 */
class CopyFromStdin {
  readonly ready: Promise<void>
  #connection: CopyConnection | undefined
  #failure: unknown
  #settled = false
  readonly #finished: Promise<void>
  #markReady!: () => void
  #finish!: (error?: unknown) => void

  constructor(readonly text: string) {
    this.ready = new Promise((resolve) => (this.#markReady = resolve))
    this.#finished = new Promise((resolve, reject) => (this.#finish = (error) => (error === undefined ? resolve() : reject(error))))
    // Until `end` awaits it, a failure is reported by `ready`, `write` or `end` themselves.
    this.#finished.catch(() => {})
  }

  submit(connection: CopyConnection): void {
    connection.query(this.text)
  }

  handleCopyInResponse(connection: CopyConnection): void {
    this.#connection = connection
    this.#markReady()
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.#failure !== undefined) throw this.#failure
    const connection = this.#connection!
    connection.sendCopyFromChunk(chunk)
    if (connection.stream.writableNeedDrain) await Promise.race([once(connection.stream, 'drain'), this.#finished])
    if (this.#failure !== undefined) throw this.#failure
  }

  async end(): Promise<void> {
    if (this.#failure === undefined) this.#connection!.endCopyFrom()
    await this.#finished
  }

  /** Abandons the COPY: the server rolls the statement back and answers with an error. */
  async fail(reason: unknown): Promise<void> {
    if (this.#settled || this.#connection === undefined) return
    this.#connection.sendCopyFail(reason instanceof Error ? reason.message : String(reason))
    await this.#finished.catch(() => {})
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    this.#settle()
  }

  handleError(error: unknown): void {
    this.#failure = error
    // pg forgets the query on an error: no ReadyForQuery reaches it after this.
    this.#settle(error)
    this.#markReady()
  }

  handleEmptyQuery(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}

  #settle(error?: unknown): void {
    if (this.#settled) return
    this.#settled = true
    this.#finish(error)
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * Disables `table`'s list-version insert trigger for this transaction's load, if it has one
 * enabled; returns its name. It runs once per statement over the statement's rows, which it
 * keeps in a transition table first: for a COPY of a million rows that cost a third of the
 * load. The counters are bumped once per company at the end instead.
 */
async function setAsideTrigger(client: PostgresBulkClient, table: string): Promise<string | undefined> {
  const name = listVersionTrigger(table)
  if (name === undefined) return undefined
  const { rows } = await client.query({
    text: `
      select 1 from pg_trigger g join pg_class t on t.oid = g.tgrelid
      where t.relname = $1 and t.relnamespace = current_schema()::regnamespace and g.tgname = $2 and g.tgenabled <> 'D'`,
    values: [table, name],
  })
  if (rows.length === 0) return undefined
  await client.query({ text: `ALTER TABLE ${quoteIdentifier(table)} DISABLE TRIGGER ${quoteIdentifier(name)}` })
  return name
}

/** The largest list order key of each company in `table` now. */
async function largestKeys(client: PostgresBulkClient, table: string): Promise<Map<number, number>> {
  const key = quoteIdentifier(LIST_VERSIONED[table]!.orderedBy)
  const { rows } = await client.query({ text: `select company_id::float8 as company, max(${key})::float8 as largest from ${quoteIdentifier(table)} group by company_id` })
  return new Map((rows as { company: number; largest: number }[]).map(({ company, largest }) => [company, largest]))
}

/** Drops `table`'s indexes (current schema) except those behind a constraint; returns them to rebuild. */
async function dropPostgresIndexes(client: PostgresBulkClient, table: string): Promise<{ name: string; definition: string }[]> {
  const { rows } = await client.query({
    text: `
      select i.relname as name, pg_get_indexdef(i.oid) as definition
      from pg_index x
      join pg_class i on i.oid = x.indexrelid
      join pg_class t on t.oid = x.indrelid
      where t.relname = $1 and t.relnamespace = current_schema()::regnamespace
        and not exists (select 1 from pg_constraint c where c.conindid = i.oid)
      order by i.relname`,
    values: [table],
  })
  const indexes = rows as { name: string; definition: string }[]
  for (const { name } of indexes) await client.query({ text: `DROP INDEX ${quoteIdentifier(name)}` })
  return indexes
}

/** Moves each loaded table's identity past its largest id (see `loadPostgresDataset`). */
async function restartIdentities(client: PostgresBulkClient, tables: readonly string[]): Promise<void> {
  const { rows } = await client.query({
    text: `
      select table_name from information_schema.columns
      where table_schema = current_schema() and column_name = 'id' and is_identity = 'YES' and table_name = any($1)
      order by table_name`,
    values: [tables],
  })
  for (const { table_name: table } of rows as { table_name: string }[]) {
    await client.query({
      text: `select setval(pg_get_serial_sequence($1, 'id'), coalesce((select max(id) from ${quoteIdentifier(table)}), 0) + 1, false)`,
      values: [quoteIdentifier(table)],
    })
  }
}
