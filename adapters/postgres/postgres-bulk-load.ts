import { once } from 'node:events'
import type { DatasetChunk } from '../../src/ports/dataset.js'
import {
  LIST_VERSIONED,
  listBlocksRecount,
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
 * Loads a stream of dataset chunks (the seed's `streamDataset`, say) into Postgres in one
 * transaction, as `loadSqliteDatasetStream` does into SQLite: all of it or none of it. Each
 * table's rows go in one `COPY … FROM STDIN` (no statement, plan or parameter per row), in the
 * binary format when every column's type has an encoder here (`binaryKinds`; the server then
 * parses no instant, day or number, which cost it about as much as the rest of the COPY), else
 * as text; this process makes and encodes the next rows while the server stores the last ones.
 * Each table's indexes, its primary key and unique constraints included, are dropped before its
 * rows and rebuilt after them (a sorted build costs a fraction of keeping them row by row; a
 * duplicate key then fails the load when its constraint is added back); then every identity
 * sequence moves past the largest id (as `loadPostgresDataset` does, for the same reason: a row
 * that brings its own id does not advance the identity). Each listed table's list-version
 * insert trigger is disabled meanwhile and its counters bumped once per company afterwards
 * (`ListVersionTally`). An empty table is truncated first and its rows copied frozen
 * (`truncateIfEmpty`). Works in the connection's current schema. After the commit, the loaded
 * tables are vacuumed and analyzed (`vacuumLoaded`).
 *
 * `client` is one connection the caller checked out, and releases.
 */
export async function loadPostgresDatasetStream(
  client: PostgresBulkClient,
  codec: SqlCodec,
  chunks: Iterable<DatasetChunk>,
  progress: LoadProgress = {},
): Promise<void> {
  const tables: string[] = []
  await client.query({ text: 'BEGIN' })
  try {
    // The pool's statement timeout bounds requests; a COPY of a million rows, or rebuilding an
    // index on them, may rightly take longer.
    await client.query({ text: "SET LOCAL statement_timeout = '0'" })
    await client.query({ text: "SET LOCAL maintenance_work_mem = '256MB'" })
    const tally = new ListVersionTally()
    const owed = new Set<string>()
    let dropped: Rebuild[] = []
    let trigger: string | undefined
    let copy: CopyFromStdin | undefined
    let kinds: Kind[] | undefined
    await walkBatches(copyCodec(codec), chunks, ROWS_PER_MESSAGE, progress, tally, {
      async tableStart(table, columns) {
        tables.push(table)
        kinds = await binaryKinds(client, table, columns)
        const frozen = await truncateIfEmpty(client, table)
        dropped = await dropPostgresIndexes(client, table)
        trigger = await setAsideTrigger(client, table)
        const start = trigger === undefined ? undefined : await largestKeys(client, table)
        if (trigger !== undefined) owed.add(table)
        const options = [...(kinds === undefined ? [] : ['FORMAT binary']), ...(frozen ? ['FREEZE true'] : [])]
        const withOptions = options.length === 0 ? '' : ` WITH (${options.join(', ')})`
        copy = new CopyFromStdin(`COPY ${quoteIdentifier(table)} (${columns.map(quoteIdentifier).join(', ')}) FROM STDIN${withOptions}`)
        ;(client as unknown as SubmittableClient).query(copy)
        await copy.ready
        if (kinds !== undefined) await copy.write(BINARY_HEADER)
        return start
      },
      async batch(batch) {
        await copy!.write(kinds === undefined ? copyText(batch) : copyBinary(batch, kinds))
      },
      async tableDone(table) {
        if (kinds !== undefined) await copy!.write(BINARY_TRAILER)
        await copy!.end()
        copy = undefined
        kinds = undefined
        // Constraints first: a duplicate key fails here, before the other indexes are built.
        for (const index of [...dropped].sort((a, b) => Number(b.constraint) - Number(a.constraint))) {
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
      await client.query({ text: listBlocksRecount(bump, (index) => `$${index + 1}`), values: [bump.companyId] })
    }
    await restartIdentities(client, tables)
    progress.stage?.('committing')
    await client.query({ text: 'COMMIT' })
  } catch (error) {
    await client.query({ text: 'ROLLBACK' }).catch(() => {})
    throw error
  }
  progress.stage?.('vacuuming')
  await vacuumLoaded(client, tables)
}

/**
 * `VACUUM (ANALYZE)` of the loaded tables, after the commit (VACUUM runs in no transaction).
 * Fresh rows have no visibility map bits, so until autovacuum comes an index-only scan reads
 * the table for every row; and a table without statistics gets guessed plans. A few seconds
 * at a million rows per table. The rows are committed by now: a failure here (a role that may
 * not vacuum) leaves them to autovacuum rather than failing the load.
 */
async function vacuumLoaded(client: PostgresBulkClient, tables: readonly string[]): Promise<void> {
  if (tables.length === 0) return
  try {
    await client.query({ text: 'SET statement_timeout = 0' })
    await client.query({ text: `VACUUM (ANALYZE) ${tables.map(quoteIdentifier).join(', ')}` })
  } catch {
    // See above: autovacuum will do it.
  } finally {
    // Back to the connection's own timeout (a pool's `-c statement_timeout=…` included).
    await client.query({ text: 'RESET statement_timeout' }).catch(() => {})
  }
}

/**
 * `codec` with instants left as Dates: binary COPY writes their microseconds straight from the
 * Date, text COPY their `toISOString` (what `postgresCodec` binds); no string made and parsed.
 */
function copyCodec(codec: SqlCodec): SqlCodec {
  return { ...codec, instant: (value: Date) => value }
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
      else if (value instanceof Date) text += value.toISOString()
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
// Binary COPY

/**
 * How a column's values are written in binary COPY: the types whose binary input takes exactly
 * what their text input takes from the values the loader binds. A table with a column of any
 * other type (a domain, an array, numeric…) is copied as text.
 */
const enum Kind {
  Int8,
  Int4,
  Float8,
  Bool,
  Date,
  Instant,
  Text,
  Jsonb,
}

/** By type oid: bigint, integer, double precision, boolean, date, timestamptz, text, varchar, json, jsonb. */
const KINDS: ReadonlyMap<number, Kind> = new Map([
  [20, Kind.Int8],
  [23, Kind.Int4],
  [701, Kind.Float8],
  [16, Kind.Bool],
  [1082, Kind.Date],
  [1184, Kind.Instant],
  [25, Kind.Text],
  [1043, Kind.Text],
  [114, Kind.Text],
  [3802, Kind.Jsonb],
])

const BINARY_HEADER = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00, 0, 0, 0, 0, 0, 0, 0, 0])
const BINARY_TRAILER = Buffer.from([0xff, 0xff])

/** Milliseconds from 1970-01-01 to 2000-01-01, Postgres' epoch for instants and days. */
const PG_EPOCH_MS = Date.UTC(2000, 0, 1)
const DAY_MS = 86_400_000
const TWO_32 = 2 ** 32
const JSONB_VERSION = 1

/**
 * The binary kind of each loaded column when every one has one, else undefined: that table is
 * copied as text.
 */
async function binaryKinds(client: PostgresBulkClient, table: string, columns: readonly string[]): Promise<Kind[] | undefined> {
  const { rows } = await client.query({
    text: `
      select a.attname as name, a.atttypid::int as type from pg_attribute a join pg_class t on t.oid = a.attrelid
      where t.relname = $1 and t.relnamespace = current_schema()::regnamespace and a.attnum > 0 and not a.attisdropped`,
    values: [table],
  })
  const types = new Map((rows as { name: string; type: number }[]).map(({ name, type }) => [name, type]))
  const kinds: Kind[] = []
  for (const column of columns) {
    const kind = KINDS.get(types.get(column) ?? 0)
    if (kind === undefined) return undefined
    kinds.push(kind)
  }
  return kinds
}

/**
 * Batch values as binary COPY tuples: a field count, then each field's length and bytes (-1:
 * null). A fresh buffer per batch: the socket may still hold the last one.
 */
function copyBinary(batch: Batch, kinds: readonly Kind[]): Buffer {
  const { values } = batch
  const width = kinds.length
  let out = Buffer.allocUnsafe(Math.max(1 << 16, batch.rows * width * 24))
  let at = 0
  const reserve = (bytes: number) => {
    if (at + bytes <= out.length) return
    const grown = Buffer.allocUnsafe(Math.max(out.length * 2, at + bytes))
    out.copy(grown, 0, 0, at)
    out = grown
  }
  const int32 = (value: number) => {
    out[at] = value >>> 24
    out[at + 1] = value >>> 16
    out[at + 2] = value >>> 8
    out[at + 3] = value
    at += 4
  }
  // A safe integer as int64 without a BigInt: the low word is the value modulo 2^32.
  const int64 = (value: number) => {
    const low = value >>> 0
    int32((value - low) / TWO_32)
    int32(low)
  }
  const text = (value: string, prefix: number) => {
    const length = value.length
    reserve(5 + length * 3)
    const start = at
    at += 4
    if (prefix >= 0) out[at++] = prefix
    // ASCII byte by byte (most of ours); else Node's encoder.
    let index = 0
    for (; index < length; index++) {
      const code = value.charCodeAt(index)
      if (code >= 0x80) break
      out[at + index] = code
    }
    at += index < length ? out.utf8Write(value, at) : length
    const bytes = at - start - 4
    out[start] = bytes >>> 24
    out[start + 1] = bytes >>> 16
    out[start + 2] = bytes >>> 8
    out[start + 3] = bytes
  }
  for (let start = 0; start < values.length; start += width) {
    reserve(2 + width * 12)
    out[at++] = width >>> 8
    out[at++] = width
    for (let column = 0; column < width; column++) {
      const value = values[start + column]
      if (value === null || value === undefined) {
        reserve(4)
        int32(-1)
        continue
      }
      switch (kinds[column]!) {
        case Kind.Int8:
          reserve(12)
          int32(8)
          if (typeof value === 'number' && Number.isSafeInteger(value)) int64(value)
          else {
            out.writeBigInt64BE(typeof value === 'bigint' ? value : typeof value === 'string' && /^-?\d{1,19}$/.test(value) ? BigInt(value) : refuse('bigint', value), at)
            at += 8
          }
          break
        case Kind.Int4:
          if (typeof value !== 'number' || !Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) refuse('integer', value)
          reserve(8)
          int32(4)
          int32(value as number)
          break
        case Kind.Float8:
          if (typeof value !== 'number') refuse('double precision', value)
          reserve(12)
          int32(8)
          out.writeDoubleBE(value as number, at)
          at += 8
          break
        case Kind.Bool:
          if (typeof value !== 'boolean') refuse('boolean', value)
          reserve(5)
          int32(1)
          out[at++] = value ? 1 : 0
          break
        case Kind.Date:
          reserve(8)
          int32(4)
          int32((dayMillis(value) - PG_EPOCH_MS) / DAY_MS)
          break
        case Kind.Instant:
          reserve(12)
          int32(8)
          int64Micros(value, int64)
          break
        case Kind.Text:
          text(asText(value), -1)
          break
        case Kind.Jsonb:
          text(asText(value), JSONB_VERSION)
          break
      }
    }
  }
  return out.subarray(0, at)
}

// Buffer#utf8Write is Node's own fast path (not in @types/node's Buffer).
declare global {
  interface Buffer {
    utf8Write(text: string, offset: number): number
  }
}

function refuse(type: string, value: unknown): never {
  throw new TypeError(`bulk load: ${typeof value} ${String(value).slice(0, 40)} is not a ${type} value`)
}

/** What the text format writes for a value of a text-like column (see `copyText`). */
function asText(value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'boolean') return value ? 't' : 'f'
  if (typeof value === 'number' || typeof value === 'bigint') return String(value)
  return refuse('text', value)
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
const leap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)

/** Milliseconds since 1970 of a UTC wall time, its fields checked as Postgres' text input checks them. */
function utcMillis(year: number, month: number, day: number, hour: number, minute: number, second: number, text: string): number {
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && leap(year) ? 29 : DAYS_IN_MONTH[month - 1]!) || hour > 23 || minute > 59 || second > 59) {
    refuse('valid date or time', text)
  }
  const millis = Date.UTC(year, month - 1, day, hour, minute, second)
  if (year >= 100) return millis
  const date = new Date(millis)
  date.setUTCFullYear(year)
  return date.getTime()
}

/** The decimal number of `length` digits at `start` of `text` (known to be digits). */
function digits(text: string, start: number, length: number): number {
  let value = 0
  for (let at = start; at < start + length; at++) value = value * 10 + text.charCodeAt(at) - 48
  return value
}

const DAY = /^\d{4}-\d\d-\d\d$/
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}(?::?\d{2})?)$/

/** Midnight UTC of a 'YYYY-MM-DD' day, in milliseconds since 1970. */
function dayMillis(value: unknown): number {
  if (typeof value !== 'string' || !DAY.test(value)) refuse('date (YYYY-MM-DD)', value)
  const text = value as string
  return utcMillis(digits(text, 0, 4), digits(text, 5, 2), digits(text, 8, 2), 0, 0, 0, text)
}

/**
 * Microseconds since 2000 of an instant: a Date (what the loader binds, see `COPY_CODEC`), or
 * an ISO 8601 string with a zone (`toISOString`'s, or with an offset and microseconds).
 */
function int64Micros(value: unknown, int64: (value: number) => void): void {
  if (value instanceof Date) {
    const millis = value.getTime()
    if (Number.isNaN(millis)) refuse('timestamptz', value)
    return int64((millis - PG_EPOCH_MS) * 1000)
  }
  if (typeof value === 'string' && value.length === 24 && ISO_UTC.test(value)) {
    const millis = utcMillis(digits(value, 0, 4), digits(value, 5, 2), digits(value, 8, 2), digits(value, 11, 2), digits(value, 14, 2), digits(value, 17, 2), value)
    return int64((millis + digits(value, 20, 3) - PG_EPOCH_MS) * 1000)
  }
  const match = typeof value === 'string' ? INSTANT.exec(value) : null
  if (match === null) refuse('timestamptz (ISO 8601 with a zone)', value)
  const [, year, month, day, hour, minute, second, fraction, zone] = match!
  const millis = utcMillis(Number(year), Number(month), Number(day), Number(hour), Number(minute), Number(second), value as string)
  let offsetMinutes = 0
  if (zone !== 'Z') {
    const offset = zone!.slice(1).replace(':', '')
    offsetMinutes = (zone![0] === '-' ? -1 : 1) * (Number(offset.slice(0, 2)) * 60 + Number(offset.slice(2) || 0))
  }
  const micros = fraction === undefined ? 0 : Number(fraction.padEnd(6, '0'))
  int64((millis - PG_EPOCH_MS - offsetMinutes * 60_000) * 1000 + micros)
}

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

/**
 * Truncates `table` when it is empty (locked first, so that no row can arrive meanwhile), no
 * foreign key references it and no trigger runs on TRUNCATE; returns whether it did. A table
 * truncated in this transaction takes `COPY … FREEZE`: its rows are written frozen and its
 * pages marked all-visible, so the VACUUM after the commit has no page left to visit and an
 * index-only scan reads no table row. Like any frozen row, they are visible to a transaction
 * whose snapshot predates the commit, which for a table that was empty shows rows where it
 * showed none (Postgres documents this of COPY FREEZE).
 */
async function truncateIfEmpty(client: PostgresBulkClient, table: string): Promise<boolean> {
  const name = quoteIdentifier(table)
  await client.query({ text: `LOCK TABLE ${name} IN ACCESS EXCLUSIVE MODE` })
  const { rows } = await client.query({
    text: `
      select not exists (select 1 from ${name})
        and not exists (select 1 from pg_constraint f where f.contype = 'f' and f.confrelid = t.oid)
        and not exists (select 1 from pg_trigger g where g.tgrelid = t.oid and g.tgtype::int & 32 <> 0) as truncate
      from pg_class t where t.relname = $1 and t.relnamespace = current_schema()::regnamespace`,
    values: [table],
  })
  if (rows[0]?.truncate !== true) return false
  await client.query({ text: `TRUNCATE ${name}` })
  return true
}

/** An index or constraint dropped before a table's rows, and the statement that puts it back. */
interface Rebuild {
  name: string
  definition: string
  constraint: boolean
}

/**
 * Drops `table`'s indexes (current schema), primary key and unique constraints included;
 * returns them to rebuild after the rows. A sorted build of a key costs a fraction of keeping
 * it row by row (and a fifth of its WAL). Kept as they are: an index behind another kind of
 * constraint (exclusion), one a foreign key references, and a constraint whose index has
 * another name (re-adding it would rename the index).
 */
async function dropPostgresIndexes(client: PostgresBulkClient, table: string): Promise<Rebuild[]> {
  const { rows } = await client.query({
    text: `
      select i.relname as name, c.conname as constraint_name,
        case when c.oid is null then pg_get_indexdef(i.oid)
          else 'ALTER TABLE ' || quote_ident(t.relname) || ' ADD CONSTRAINT ' || quote_ident(c.conname) || ' ' || pg_get_constraintdef(c.oid) end as definition
      from pg_index x
      join pg_class i on i.oid = x.indexrelid
      join pg_class t on t.oid = x.indrelid
      left join pg_constraint c on c.conindid = i.oid and c.conrelid = t.oid
      where t.relname = $1 and t.relnamespace = current_schema()::regnamespace
        and (c.oid is null or (c.contype in ('p', 'u') and c.conname = i.relname))
        and not exists (select 1 from pg_constraint f where f.contype = 'f' and f.conindid = i.oid)
      order by i.relname`,
    values: [table],
  })
  const indexes = rows as { name: string; constraint_name: string | null; definition: string }[]
  for (const { name, constraint_name: constraint } of indexes) {
    await client.query({
      text: constraint === null ? `DROP INDEX ${quoteIdentifier(name)}` : `ALTER TABLE ${quoteIdentifier(table)} DROP CONSTRAINT ${quoteIdentifier(constraint)}`,
    })
  }
  return indexes.map(({ name, constraint_name: constraint, definition }) => ({ name, definition, constraint: constraint !== null }))
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
