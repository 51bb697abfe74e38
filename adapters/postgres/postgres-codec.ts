import { plainColumn, type SqlCodec, type SqlColumnTypes } from '../sql/codec.js'
import { pgDriver } from './postgres-driver.js'

const INT8_OID = 20
const DATE_OID = 1082

/**
 * int8 (our ids, money in cents, `count(*)`) arrives as text because it can exceed 2^53.
 * Ours never do; if one ever did, failing the query beats silently rounding an id.
 */
function parseInt8(text: string): number {
  const value = Number(text)
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(`fastify-workforce-api: int8 value ${text} is not a safe JavaScript integer`)
  }
  return value
}

/**
 * Result parsers for every query this adapter runs, passed per query (`{ types }`) and
 * never installed in the global `pg.types`: the pool may be the host's, and the host's
 * other queries must keep the parsers they expect. Types not listed fall back to pg's
 * defaults (timestamptz → Date, boolean, jsonb → parsed JSON, float8 → number).
 */
export const postgresTypes = new pgDriver.TypeOverrides()
postgresTypes.setTypeParser(INT8_OID, 'text', parseInt8)
// pg's default turns a `date` into a Date at local midnight: a day is a day, keep 'YYYY-MM-DD'.
postgresTypes.setTypeParser(DATE_OID, 'text', (text: string) => text)

/**
 * Values as the `postgresTypes` parsers return them: instants are Dates, booleans and jsonb
 * are native, int8 and days were converted above. Instants are bound as ISO strings so the
 * process's time zone never enters the SQL.
 */
export const postgresCodec: SqlCodec = {
  instant: (value) => value.toISOString(),
  readInstant: (value) => (value instanceof Date ? value : new Date(value as string)),
  bool: (value) => value,
  readBool: (value) => value === true,
  // pg would send a JS array as a Postgres array literal, not JSON: serialise ourselves.
  json: (value) => JSON.stringify(value),
  readJson: (value) => value as never,
  day: (value) => value,
  readDay: (value) => value as string,
  readInt: (value) => (typeof value === 'number' ? value : parseInt8(String(value))),
  filterOnly: plainColumn,
  rowValueRanges: true,
  boundLimits: true,
}

export const postgresColumnTypes: SqlColumnTypes = {
  dialect: 'postgres',
  id: 'bigint',
  instant: 'timestamptz',
  bool: 'boolean',
  json: 'jsonb',
  day: 'date',
  bigint: 'bigint',
  real: 'double precision',
}
