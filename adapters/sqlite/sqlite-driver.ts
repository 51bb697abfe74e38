import type Database from 'better-sqlite3'
import { requireDriver } from '../sql/require-driver.js'

/** better-sqlite3, an optional peer dependency, loaded when this adapter is imported. */
export const BetterSqlite3: typeof Database = requireDriver('better-sqlite3', 'fastify-workforce-api/sqlite')
