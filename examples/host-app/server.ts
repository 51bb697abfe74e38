/**
 * The host application: its own routes next to the public API, both over the host's database.
 *
 *   npx tsx examples/host-app/server.ts       # seeds an in-memory database and prints a demo key
 *   HOST_DB=host.db PORT=3000 npx tsx examples/host-app/server.ts
 */
import Fastify, { type FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import { openSqliteWebhookStore } from '../../adapters/sqlite/index.js' // 'fastify-workforce-api/sqlite' in a host
import { pathToFileURL } from 'node:url'
import { LOG_REDACT_PATHS, workforceApi, type WebhookOptions } from '../../src/index.js' // 'fastify-workforce-api' in a host
import { generateDataset } from '../../src/seed/generate.js'
import { openHostDatabase, type HostDatabase } from './database.js'
import { HostKeyStore } from './host-key-store.js'
import { HostModuleRegistry } from './host-module-registry.js'
import { HostStorage } from './host-storage.js'
import { importDataset } from './import-dataset.js'
import { TeamReader } from './team-reader.js'
import { teamsResource } from './teams.js'

export interface HostServerOptions {
  /** The app's database. The server uses it and never closes it: whoever opened it does. */
  db: Kysely<HostDatabase>
  logger?: boolean
  /** Webhook delivery (needs `secretKey`); without it the host publishes events that are kept but not sent. */
  webhookOptions?: WebhookOptions
}

/** The host's app: `/health` and `/internal/*` as before, the public API under `/api/public`. */
export async function buildHostServer({ db, logger = false, webhookOptions }: HostServerOptions): Promise<FastifyInstance> {
  // Our plugin never logs headers; the redaction covers the host's own request logging.
  const app = Fastify({ logger: logger ? { redact: LOG_REDACT_PATHS } : false })

  // The host's own routes: no API key, the host's own shapes, Fastify's default errors.
  app.get('/health', async () => ({ status: 'ok' }))

  app.get(
    '/internal/staff',
    { schema: { querystring: { type: 'object', properties: { org: { type: 'integer', minimum: 1 } }, required: ['org'] } } },
    async (request) => {
      const { org } = request.query as { org: number }
      const staff = await db
        .selectFrom('staff_members')
        .select(['staff_member_id', 'payroll_code', 'position_title', 'hours_per_week'])
        .where('org_id', '=', org)
        .orderBy('payroll_code')
        .execute()
      return { org, staff }
    },
  )

  app.get('/internal/staff/:id', async (request, reply) => {
    const id = Number((request.params as { id: string }).id)
    const member = await db.selectFrom('staff_members').select(['staff_member_id', 'payroll_code']).where('staff_member_id', '=', id).executeTakeFirst()
    if (member === undefined) return reply.code(404).send({ message: 'No such staff member' })
    return member
  })

  // The public API, over the same database through the host's own ports. The webhook outbox
  // lives in the host's database too, so events commit with the host's own changes.
  await app.register(workforceApi, {
    prefix: '/api/public',
    storage: new HostStorage(db),
    keyStore: new HostKeyStore(db),
    modules: new HostModuleRegistry(db),
    webhooks: await openSqliteWebhookStore({ db }),
    // A resource of the host's own, served like ours: GET /api/public/v1/teams[/:id] (teams.ts).
    resources: [teamsResource(new TeamReader(db))],
    ...(webhookOptions === undefined ? {} : { webhookOptions }),
  })

  // A screen of the host's own: a planner moves a shift. The change and its `shifts.updated`
  // event commit together, or neither does; `data` is the shift as GET /v1/shifts/:id shows it.
  app.post(
    '/internal/shifts/:id/move',
    {
      schema: {
        params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] },
        body: {
          type: 'object',
          properties: { org: { type: 'integer', minimum: 1 }, begins_at: { type: 'string', format: 'date-time' }, finishes_at: { type: 'string', format: 'date-time' } },
          required: ['org', 'begins_at', 'finishes_at'],
          additionalProperties: false,
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: number }
      const { org, begins_at, finishes_at } = request.body as { org: number; begins_at: string; finishes_at: string }
      const [begins, finishes] = [new Date(begins_at), new Date(finishes_at)]
      if (!(begins < finishes)) return reply.code(400).send({ message: 'begins_at must be before finishes_at' })
      const shift = await db.transaction().execute(async (trx) => {
        const changed = await trx
          .updateTable('work_shifts')
          .set({ begins_at: begins.toISOString(), finishes_at: finishes.toISOString(), updated_at: new Date().toISOString() })
          .where('org_id', '=', org)
          .where('shift_id', '=', id)
          .executeTakeFirst()
        if (changed.numUpdatedRows === 0n) return null
        // Read back inside the transaction, through the same mapping the API's reads use.
        const moved = await new HostStorage(trx).shifts.get(org, id)
        if (moved === null) return null
        await app.workforceApi.events.publish(trx, { type: 'shifts.updated', companyId: org, record: moved })
        return moved
      })
      if (shift === null) return reply.code(404).send({ message: 'No such shift' })
      return { shift_id: shift.id, begins_at: shift.starts_at, finishes_at: shift.ends_at }
    },
  )

  // Another screen: renaming a team, the host's own resource. Its `teams.updated` event is
  // published the same way, and `data` is the team as GET /v1/teams/:id shows it.
  app.post(
    '/internal/teams/:id/rename',
    {
      schema: {
        params: { type: 'object', properties: { id: { type: 'integer', minimum: 1 } }, required: ['id'] },
        body: {
          type: 'object',
          properties: { org: { type: 'integer', minimum: 1 }, name: { type: 'string', minLength: 1, maxLength: 200 } },
          required: ['org', 'name'],
          additionalProperties: false,
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: number }
      const { org, name } = request.body as { org: number; name: string }
      const team = await db.transaction().execute(async (trx) => {
        const changed = await trx
          .updateTable('teams')
          .set({ name, updated_at: new Date().toISOString() })
          .where('org_id', '=', org)
          .where('id', '=', id)
          .executeTakeFirst()
        if (changed.numUpdatedRows === 0n) return null
        const renamed = await new TeamReader(trx).get(org, id)
        if (renamed === null) return null
        await app.workforceApi.events.publish(trx, { type: 'teams.updated', companyId: org, record: renamed })
        return renamed
      })
      if (team === null) return reply.code(404).send({ message: 'No such team' })
      return { team_id: team.id, name: team.name }
    },
  )
  return app
}

async function main(): Promise<void> {
  const filename = process.env.HOST_DB ?? ':memory:'
  const { db } = await openHostDatabase(filename)
  const organisations = await db.selectFrom('organisations').select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow()
  if (organisations.count === 0) await importDataset(db, generateDataset())

  const app = await buildHostServer({ db, logger: true })
  app.addHook('onClose', () => db.destroy())
  const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'], name: 'host-app demo' })
  const port = Number(process.env.PORT ?? 3000)
  await app.listen({ port })
  // A demo convenience only: a real app shows a new key once, in its admin UI, never in logs.
  console.log(`curl -H 'X-Api-Key: ${key}' http://localhost:${port}/api/public/v1/users`)
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
