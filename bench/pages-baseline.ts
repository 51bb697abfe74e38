import Fastify, { type FastifyInstance } from 'fastify'
import { postgresSql, sqliteSql } from './pages-baseline-sql.js'
import { BASELINE_COMPANY, BASELINE_RESOURCES, PAGINATION_SCHEMA, resourceSql, type Row } from './pages-routes.js'

/** Where the baseline mounts its routes: the tenant is a path segment, there is no key. */
export const BASELINE_PREFIX = '/baseline'

const pageQuery = {
  type: 'object',
  properties: {
    page: { type: 'integer', minimum: 1, default: 1 },
    per_page: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
  },
  additionalProperties: false,
} as const
const companyParams = { type: 'object', properties: { company: { type: 'integer', minimum: 1 } }, required: ['company'] } as const
const itemParams = {
  type: 'object',
  properties: { company: { type: 'integer', minimum: 1 }, id: { type: 'integer', minimum: 1 } },
  required: ['company', 'id'],
} as const

/**
 * The hand-written server over a SQLite file or a Postgres URL: `GET /baseline/:company/v1/<list>`,
 * `…/<list>/:id` and `…/company`. No auth, no rate limit, no logging: the tenant is in the path.
 * SQLite runs on the event loop (better-sqlite3 is synchronous); on Postgres the page and the
 * count go out together on a pool of 10.
 */
export async function buildPagesBaseline(db: string): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const sql = /^postgres(ql)?:\/\//.test(db) ? postgresSql(db) : sqliteSql(db)
  const app = Fastify({ logger: false })

  for (const resource of BASELINE_RESOURCES) {
    const statements = resourceSql(resource)
    app.get(
      `${BASELINE_PREFIX}/:company/v1/${resource.path}`,
      {
        schema: {
          params: companyParams,
          querystring: pageQuery,
          response: { 200: { type: 'object', properties: { data: { type: 'array', items: resource.item }, pagination: PAGINATION_SCHEMA } } },
        },
      },
      async (request) => {
        const { company } = request.params as { company: number }
        const { page, per_page: perPage } = request.query as { page: number; per_page: number }
        const [rows, counted] = await Promise.all([
          sql.all(statements.page, [company, perPage, (page - 1) * perPage]),
          sql.all(statements.count, [company]),
        ])
        const total = Number(counted[0]?.total ?? 0)
        return {
          data: rows.map(resource.render),
          pagination: { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) },
        }
      },
    )
    app.get(
      `${BASELINE_PREFIX}/:company/v1/${resource.path}/:id`,
      { schema: { params: itemParams, response: { 200: { type: 'object', properties: { data: resource.item } }, 404: { type: 'object' } } } },
      async (request, reply) => {
        const { company, id } = request.params as { company: number; id: number }
        const [row] = await sql.all(statements.byId, [company, id])
        if (row === undefined) return reply.code(404).send({ error: { code: 'not_found' } })
        return { data: resource.render(row) }
      },
    )
  }
  app.get(
    `${BASELINE_PREFIX}/:company/v1/company`,
    { schema: { params: companyParams, response: { 200: { type: 'object', properties: { data: BASELINE_COMPANY.item } } } } },
    async (request) => {
      const { company } = request.params as { company: number }
      const [row] = await sql.all(BASELINE_COMPANY.sql, [company])
      return { data: BASELINE_COMPANY.render(row as Row) }
    },
  )
  await app.ready()
  return {
    app,
    async close() {
      await app.close()
      await sql.close()
    },
  }
}
