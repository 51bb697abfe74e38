import { unindexedColumn, type SqlCodec, type SqlColumnTypes } from '../sql/codec.js'

/**
 * SQLite has no boolean, timestamp or JSON type: instants are INTEGER milliseconds since
 * the epoch (exact, and compare as numbers), booleans 0/1, JSON text, days `YYYY-MM-DD` text.
 */
export const sqliteCodec: SqlCodec = {
  instant: (value) => value.getTime(),
  readInstant: (value) => new Date(value as number),
  bool: (value) => (value ? 1 : 0),
  readBool: (value) => value === 1,
  json: (value) => JSON.stringify(value),
  readJson: (value) => JSON.parse(value as string),
  day: (value) => value,
  readDay: (value) => value as string,
  readInt: (value) => Number(value),
  filterOnly: unindexedColumn,
  rowValueRanges: false,
  boundLimits: false,
}

export const sqliteColumnTypes: SqlColumnTypes = {
  dialect: 'sqlite',
  id: 'integer',
  instant: 'integer',
  bool: 'integer',
  json: 'text',
  day: 'text',
  bigint: 'integer',
  real: 'real',
}
