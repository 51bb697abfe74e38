import Fastify, { type FastifyInstance } from 'fastify'
import { openSqliteDatabase } from '../adapters/sqlite/sqlite-database.js'

export const BARE_USERS_PATH = '/bare/users'

/**
 * The hand-written baseline's SQL for `GET /v1/users` without filters: a page by `limit`/`offset`
 * over the membership join, and a count. Since migration 0009 a membership names its person
 * (`person_id`; a pending user has none yet): a left join on it, as adapters/sql/tables/users.ts
 * (it joined `m.user_id`, which matches the person only by chance). The plugin reads the same rows its own way (a seek on a
 * read worker); the benchmark checks at start-up that both answer the same JSON.
 */
const USERS_PAGE_SQL =
  'select "m"."user_id" as "id", "u"."email", "u"."first_name", "u"."last_name", "u"."active", "m"."role_ids", "m"."invitation_status", "m"."invited_email", "m"."invited_first_name", "m"."invited_last_name", "m"."created_at", "m"."updated_at" from "wfa_memberships" as "m" left join "wfa_users" as "u" on "u"."id" = "m"."person_id" where "m"."company_id" = ? order by "m"."user_id" limit ? offset ?'
const USERS_COUNT_SQL =
  'select count(*) as "total" from "wfa_memberships" as "m" where "m"."company_id" = ?'

interface UserRow {
  id: number
  email: string | null
  first_name: string | null
  last_name: string | null
  active: number | null
  role_ids: string
  invitation_status: 'accepted' | 'pending'
  invited_email: string | null
  invited_first_name: string | null
  invited_last_name: string | null
  created_at: number
  updated_at: number
}

// Written out by hand, not imported from src/, so a field the plugin adds or drops shows up
// as a body mismatch at start-up instead of silently changing both sides.
const id = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } as const
const timestamp = { type: 'string', format: 'date-time' } as const
const integer = { type: 'integer' } as const
const listEnvelope = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id,
          email: { type: 'string' },
          first_name: { type: 'string' },
          last_name: { type: 'string' },
          active: { type: 'boolean' },
          role_ids: { type: 'array', items: id },
          invitation_status: { type: 'string', enum: ['accepted', 'pending'] },
          created_at: timestamp,
          updated_at: timestamp,
        },
        required: ['id', 'email', 'first_name', 'last_name', 'active', 'role_ids', 'invitation_status', 'created_at', 'updated_at'],
      },
    },
    pagination: {
      type: 'object',
      properties: { page: integer, per_page: integer, total: integer, total_pages: integer },
      required: ['page', 'per_page', 'total', 'total_pages'],
    },
  },
  required: ['data', 'pagination'],
} as const
const pageQuery = {
  type: 'object',
  properties: {
    page: { type: 'integer', minimum: 1, default: 1 },
    per_page: { type: 'integer', minimum: 1, maximum: 100, default: 25 },
  },
} as const

/**
 * The baseline: what a hand-written route over the same data would do. No auth, no scope or
 * module check, the tenant fixed to `companyId`; the same two statements, prepared once with
 * better-sqlite3 on a connection opened with the adapter's settings (WAL, synchronous
 * NORMAL), the same row-to-wire conversion, and a response schema for fast serialization.
 */
export async function buildBareApp(filename: string, companyId: number): Promise<{ app: FastifyInstance; close(): void }> {
  const database = openSqliteDatabase(filename)
  const pageStatement = database.prepare<[number, number, number], UserRow>(USERS_PAGE_SQL)
  const countStatement = database.prepare<[number], { total: number }>(USERS_COUNT_SQL)

  const app = Fastify({ logger: false })
  app.get(BARE_USERS_PATH, { schema: { querystring: pageQuery, response: { 200: listEnvelope } } }, async (request) => {
    const { page, per_page: perPage } = request.query as { page: number; per_page: number }
    const rows = pageStatement.all(companyId, perPage, (page - 1) * perPage)
    const total = countStatement.get(companyId)?.total ?? 0
    return {
      data: rows.map((row) => {
        // A pending member is shown only as the company sent them (docs/decisions.md).
        const pending = row.invitation_status === 'pending'
        return {
          id: row.id,
          email: pending ? (row.invited_email as string) : (row.email as string),
          first_name: pending ? (row.invited_first_name as string) : (row.first_name as string),
          last_name: pending ? (row.invited_last_name as string) : (row.last_name as string),
          active: !pending && row.active === 1,
          role_ids: JSON.parse(row.role_ids) as number[],
          invitation_status: row.invitation_status,
          created_at: new Date(row.created_at).toISOString(),
          updated_at: new Date(row.updated_at).toISOString(),
        }
      }),
      pagination: { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) },
    }
  })
  await app.ready()
  return { app, close: () => database.close() }
}
