import type * as pg from 'pg'
import { requireDriver } from '../sql/require-driver.js'

/** pg, an optional peer dependency, loaded when this adapter is imported. */
export const pgDriver: typeof pg = requireDriver('pg', 'fastify-workforce-api/postgres')
