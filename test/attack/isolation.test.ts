import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { probeSites, runIsolation } from './isolation-run.js'
import { fuzzSeed, MEMORY, PREFIX, SQLITE, startServer, type AttackBackend, type AttackServer } from './harness.js'
import type { RouteInfo } from './arbitraries.js'

/**
 * Issue 8: tenant isolation as a property, over HTTP, on memory and SQLite (Postgres:
 * isolation.postgres.test.ts). Replay a run with WORKFORCE_FUZZ_SEED=<seed>.
 */
const { seed, origin } = fuzzSeed()
console.log(`[attack] isolation seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}`)

/**
 * Routes that take no id at all (spec 4.1): nothing of another company can be named there. The
 * events feed takes a cursor, not an id; another company's cursor answering exactly as garbage
 * does is test/events/event-feed.test.ts's.
 */
const ID_LESS = ['/v1/users', '/v1/employees', '/v1/roles', '/v1/company', '/v1/projects', '/v1/events', '/v1/events/cursor']

describe.each([MEMORY, SQLITE])('tenant isolation as a property ($name)', (backend: AttackBackend) => {
  let server: AttackServer
  beforeAll(async () => {
    server = await startServer(backend)
  })
  afterAll(async () => {
    await server?.close()
  })

  it('probes every id-carrying input of every route', () => {
    const routes: RouteInfo[] = server.app.workforceApi.routes.map((r) => ({ method: r.method, url: r.url.slice(PREFIX.length), operationId: r.operationId, scope: r.scope }))
    const covered = new Set(probeSites(routes).map((site) => `${site.route.method} ${site.route.url}`))
    const uncovered = routes.filter((route) => !covered.has(`${route.method} ${route.url}`) && !(route.method !== 'POST' && ID_LESS.includes(route.url)))
    expect(uncovered.map((route) => `${route.method} ${route.url}`)).toEqual([])
    const names = new Set(probeSites(routes).map((site) => `${site.where}:${site.name}`))
    for (const name of ['path:id', 'query:employee_id', 'query:project_id', 'query:list_id', 'query:assigned_to', 'body:list_id', 'body:assigned_to', 'body:assignee_group_id', 'body:role_ids']) {
      expect(names, name).toContain(name)
    }
  })

  it("answers another company's ids exactly as ids that never existed, and changes nothing", async () => {
    try {
      const report = await runIsolation(server, seed, 400)
      console.log(`[attack isolation ${backend.name}] ${report.probes} probes, ${report.requests} requests over ${report.sitesCovered} probe sites; statuses ${JSON.stringify(report.byStatus)}; ${report.echoes} answers echo the id; sites ${JSON.stringify(report.bySite)}`)
    } catch (error) {
      throw new Error(`[attack isolation ${backend.name}] seed ${seed} (${origin}); replay with WORKFORCE_FUZZ_SEED=${seed}\n${(error as Error).message}`, { cause: error })
    }
  }, 60_000)
})
