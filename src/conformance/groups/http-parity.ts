import Fastify, { type FastifyInstance } from 'fastify'
import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import { createMemoryAdapter } from '../../../adapters/memory/index.js'
import { MemoryKeyStore } from '../../../adapters/memory/memory-key-store.js'
import { MemoryModuleRegistry } from '../../../adapters/memory/memory-module-registry.js'
import { workforceApi } from '../../plugin.js'
import { portsOf, type WorkforcePorts } from '../../ports/index.js'
import type { ConformanceContext } from '../context.js'
import { loadableCopy } from '../fixture.js'
import type { ConformanceGroup } from '../group.js'

const PREFIX = '/api/public'

interface Probe {
  path: string
  status: number
}

interface PublicApp {
  app: FastifyInstance
  keyOf: Map<number, string>
}

/** The whole HTTP app a host builds: Fastify plus our plugin at `/api/public`, one key per company. */
async function buildPublicApp(ports: WorkforcePorts, companyIds: readonly number[]): Promise<PublicApp> {
  const app = Fastify({ logger: false })
  await app.register(workforceApi, { prefix: PREFIX, ...portsOf(ports), moduleCacheTtlMs: 0 })
  await app.ready()
  const keyOf = new Map<number, string>()
  for (const companyId of companyIds) {
    const { key } = await app.workforceApi.keys.create({ companyId, scopes: ['all'], name: 'conformance' })
    keyOf.set(companyId, key)
  }
  return { app, keyOf }
}

async function call(target: PublicApp, companyId: number, path: string): Promise<{ status: number; body: unknown }> {
  const response = await target.app.inject({ method: 'GET', url: `${PREFIX}${path}`, headers: { 'x-api-key': target.keyOf.get(companyId) ?? '' } })
  return { status: response.statusCode, body: response.json() }
}

/** Requests whose answers cover every resource, every filter kind, by-id lookups, 404s and a 403. */
function probes(ctx: ConformanceContext): Record<number, Probe[]> {
  const q = (value: string) => encodeURIComponent(value)
  const ids = (resource: Parameters<typeof ctx.expected.records>[0], companyId: number) =>
    ctx.expected.records(resource, companyId).map((row) => row.id)
  const firstOf = (resource: Parameters<typeof ctx.expected.records>[0], companyId: number) => ids(resource, companyId)[0] ?? 0
  const companyOneUsers = new Set(ids('users', 1))
  const onlyInTwo = ids('users', 2).find((id) => !companyOneUsers.has(id)) ?? 0
  const person = ctx.fixture.people.find((candidate) => candidate.id === ctx.edges.person)
  const busiest = (companyId: number) => {
    const counts = new Map<number, number>()
    for (const shift of ctx.expected.records('shifts', companyId)) counts.set(shift.employee_id, (counts.get(shift.employee_id) ?? 0) + 1)
    return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0] ?? 0
  }
  const lists = ctx.fixture.todoLists
  const listOf = (companyId: number) => lists.find((list) => list.company_id === companyId)?.id ?? 0
  const pendingEmail = (companyId: number) =>
    ctx.expected.records('users', companyId).find((user) => user.invitation_status === 'pending')?.email.toLowerCase() ?? ''
  const membershipUpdated = ctx.expected.records('users', 1).map((user) => user.updated_at.toISOString()).sort()[10] ?? ''

  return {
    1: [
      { path: '/v1/company', status: 200 },
      { path: '/v1/users', status: 200 },
      { path: '/v1/users?per_page=100', status: 200 },
      { path: '/v1/users?page=3&per_page=7', status: 200 },
      { path: '/v1/users?page=99', status: 200 },
      { path: '/v1/users?active=false&per_page=100', status: 200 },
      { path: `/v1/users?email=${q(person?.email.toUpperCase() ?? '')}`, status: 200 },
      { path: `/v1/users?updated_since=${q(membershipUpdated)}&per_page=100`, status: 200 },
      { path: `/v1/users/${ctx.edges.person}`, status: 200 },
      { path: `/v1/users/${onlyInTwo}`, status: 404 },
      // A pending member: only what company 1 sent, inactive, dated by the membership.
      { path: `/v1/users/${ctx.edges.pendingInCompany1}`, status: 200 },
      { path: `/v1/users?email=${q(pendingEmail(1))}&active=false`, status: 200 },
      { path: '/v1/employees?per_page=100', status: 200 },
      { path: `/v1/employees?updated_since=${q('2026-01-05T08:30:00.000+01:00')}`, status: 200 },
      { path: `/v1/employees/${firstOf('employees', 1)}`, status: 200 },
      { path: '/v1/roles?per_page=100', status: 200 },
      { path: `/v1/roles/${firstOf('roles', 2)}`, status: 404 },
      { path: '/v1/projects?status=on_hold', status: 200 },
      { path: '/v1/projects?kind=customer&per_page=100', status: 200 },
      { path: `/v1/projects?customer_id=${ctx.edges.bigCustomerId}`, status: 200 },
      { path: `/v1/projects/${firstOf('projects', 1)}`, status: 200 },
      { path: '/v1/shifts?date_from=2026-03-29&date_to=2026-03-30', status: 200 },
      { path: '/v1/shifts?date_from=2026-10-25&date_to=2026-10-25', status: 200 },
      { path: `/v1/shifts?employee_id=${busiest(1)}&per_page=100`, status: 200 },
      { path: '/v1/shifts?status=confirmed&date_from=2026-03-01', status: 200 },
      { path: `/v1/shifts/${firstOf('shifts', 1)}`, status: 200 },
      { path: '/v1/absences?date_from=2026-02-01&date_to=2026-02-28', status: 200 },
      { path: '/v1/absences?status=approved&per_page=100', status: 200 },
      { path: '/v1/expenses?category=equipment', status: 200 },
      { path: '/v1/expenses?date_to=2026-12-31&per_page=100', status: 200 },
      { path: `/v1/expenses/${ctx.edges.bigAmountExpense}`, status: 200 },
      { path: '/v1/todos?due_from=2026-03-29&due_to=2026-03-30', status: 200 },
      { path: '/v1/todos?due_from=2026-10-25&due_to=2026-10-26', status: 200 },
      { path: '/v1/todos?important=true&per_page=100', status: 200 },
      { path: `/v1/todos?list_id=${listOf(1)}&status=open`, status: 200 },
      { path: `/v1/todos/${ctx.edges.unicodeTodo}`, status: 200 },
    ],
    2: [
      { path: '/v1/company', status: 200 },
      { path: '/v1/users?active=true&per_page=100', status: 200 },
      { path: `/v1/users/${ctx.edges.person}`, status: 404 },
      { path: `/v1/users/${ctx.edges.pendingInCompany2}`, status: 200 },
      { path: `/v1/users?email=${q(pendingEmail(2))}`, status: 200 },
      { path: '/v1/shifts?date_from=2026-11-01&date_to=2026-11-01', status: 200 },
      { path: '/v1/shifts?date_from=2026-03-08&date_to=2026-03-09', status: 200 },
      { path: '/v1/todos?due_from=2026-03-08&due_to=2026-03-09', status: 200 },
      { path: '/v1/todos?due_to=2026-11-01&per_page=100', status: 200 },
      { path: `/v1/expenses/${ctx.edges.zeroAmountExpense}`, status: 200 },
      { path: `/v1/expenses/${ctx.edges.bigAmountExpense}`, status: 404 },
      { path: `/v1/absences?employee_id=${firstOf('employees', 2)}`, status: 200 },
    ],
    3: [
      { path: '/v1/company', status: 200 },
      { path: '/v1/users', status: 200 },
      { path: '/v1/roles?page=2', status: 200 },
      { path: `/v1/employees/${firstOf('employees', 1)}`, status: 404 },
      { path: '/v1/projects', status: 403 },
      { path: '/v1/todos', status: 403 },
    ],
  }
}

/**
 * End to end: the same requests, through the whole HTTP app, over the subject and over the
 * in-memory reference adapter loaded with the same fixture, give identical responses.
 * This is the one place the suite compares with the reference: a host can prove its adapter
 * gives exactly the API responses ours does.
 */
export const httpParity: ConformanceGroup = {
  title: 'HTTP responses equal the reference adapter',
  requires: [],
  define(ctx) {
    for (const companyId of [1, 2, 3]) {
      it(`company ${companyId}: lists, filters, lookups and refusals answer exactly as over the reference adapter`, async () => {
        const reference = createMemoryAdapter()
        await reference.loadDataset(loadableCopy(ctx.fixture))
        const subject = ctx.subject()
        const ours = await buildPublicApp(
          {
            storage: subject.storage,
            keyStore: ctx.supports.keyStore ? ctx.keyStore() : new MemoryKeyStore(),
            modules: ctx.supports.modules ? ctx.modules() : new MemoryModuleRegistry(structuredClone(ctx.fixture.modules)),
          },
          ctx.expected.companyIds,
        )
        const theirs = await buildPublicApp(reference, ctx.expected.companyIds)
        try {
          for (const probe of probes(ctx)[companyId] ?? []) {
            const expected = await call(theirs, companyId, probe.path)
            expect(expected.status, `reference adapter: GET ${probe.path} as company ${companyId} (suite self-check)`).toBe(probe.status)
            expect(await call(ours, companyId, probe.path), `GET ${probe.path} as company ${companyId}: status and JSON body`).toEqual(expected)
          }
        } finally {
          await ours.app.close()
          await theirs.app.close()
          await reference.close()
        }
      })
    }
  },
}
