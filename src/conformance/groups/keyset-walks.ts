import Fastify, { type FastifyInstance } from 'fastify'
import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import { MemoryKeyStore } from '../../../adapters/memory/memory-key-store.js'
import { MemoryModuleRegistry } from '../../../adapters/memory/memory-module-registry.js'
import { workforceApi } from '../../plugin.js'
import type { ConformanceContext } from '../context.js'
import type { ConformanceGroup } from '../group.js'
import { LIST_RESOURCES, type ListResource } from '../resources.js'

const PREFIX = '/api/public'
/** Small, so every list of the fixture takes several answers. */
const PER_PAGE = 7

interface KeysetBody {
  data: Array<{ id: number }>
  pagination: { page: number; per_page: number; total: number; total_pages: number; has_more?: boolean; next_starting_after?: number }
}

/** The whole HTTP app over the subject's storage, one key per company. */
async function appOver(ctx: ConformanceContext): Promise<{ app: FastifyInstance; keyOf: Map<number, string> }> {
  const app = Fastify({ logger: false })
  await app.register(workforceApi, {
    prefix: PREFIX,
    storage: ctx.storage(),
    keyStore: ctx.supports.keyStore ? ctx.keyStore() : new MemoryKeyStore(),
    modules: ctx.supports.modules ? ctx.modules() : new MemoryModuleRegistry(structuredClone(ctx.fixture.modules)),
    moduleCacheTtlMs: 0,
    rateLimit: false,
  })
  await app.ready()
  const keyOf = new Map<number, string>()
  for (const companyId of ctx.expected.companyIds) {
    keyOf.set(companyId, (await app.workforceApi.keys.create({ companyId, scopes: ['all'], name: 'conformance' })).key)
  }
  return { app, keyOf }
}

async function keysetPage(app: FastifyInstance, key: string, resource: ListResource, after: number): Promise<KeysetBody> {
  const url = `${PREFIX}/v1/${resource}?starting_after=${after}&per_page=${PER_PAGE}`
  const response = await app.inject({ method: 'GET', url, headers: { 'x-api-key': key } })
  expect(response.statusCode, `GET ${url}: ${response.body}`).toBe(200)
  return response.json() as KeysetBody
}

/**
 * `starting_after` end to end, through the whole app over the subject's storage: with `seek`,
 * it is one `seek.page({ after })`; without, the plugin searches `list()` by offsets. Either way
 * a walk must return every row once, in id order, with the exact total, from any id, a row's
 * or not (docs/api.md, section 4).
 */
export const keysetWalks: ConformanceGroup = {
  title: 'keyset walks (starting_after)',
  requires: [],
  define(ctx) {
    it('a walk from starting_after=0 returns every row of every list once, in id order, with the exact total', async () => {
      const { app, keyOf } = await appOver(ctx)
      try {
        for (const companyId of ctx.expected.companyIds) {
          for (const resource of LIST_RESOURCES) {
            const expected = ctx.expected.records(resource, companyId).map((row) => row.id)
            if (expected.length === 0) continue // the empty company: tenant isolation covers it
            const ids: number[] = []
            let cursor = 0
            for (let answers = 0; answers <= expected.length; answers++) {
              const body = await keysetPage(app, keyOf.get(companyId) as string, resource, cursor)
              const what = `${resource} of company ${companyId} after ${cursor}`
              expect({ total: body.pagination.total, next: body.pagination.next_starting_after }, `${what}: total and next_starting_after`).toEqual({
                total: expected.length,
                next: body.data.at(-1)?.id ?? cursor,
              })
              ids.push(...body.data.map((row) => row.id))
              if (body.pagination.has_more !== true) break
              cursor = body.pagination.next_starting_after as number
            }
            expect(ids, `${resource} of company ${companyId}: ids of the whole walk, per_page ${PER_PAGE}`).toEqual(expected)
          }
        }
      } finally {
        await app.close()
      }
    })

    it('an id that is no row of the list (a gap, another company’s row, past the end) starts where its value says', async () => {
      const { app, keyOf } = await appOver(ctx)
      try {
        for (const resource of LIST_RESOURCES) {
          const [first, second] = ctx.expected.companyIds
          const ids = ctx.expected.records(resource, first as number).map((row) => row.id)
          const theirs = ctx.expected.records(resource, second as number).map((row) => row.id)
          if (ids.length === 0) continue
          const middle = ids[Math.floor(ids.length / 2)] as number
          const cursors = [middle - 1, ...theirs.slice(0, 1), (ids.at(-1) as number) + 1_000]
          for (const after of cursors) {
            const body = await keysetPage(app, keyOf.get(first as number) as string, resource, after)
            const rest = ids.filter((id) => id > after)
            expect(
              { ids: body.data.map((row) => row.id), total: body.pagination.total, has_more: body.pagination.has_more },
              `${resource} of company ${String(first)} after ${after}: ids, total, has_more`,
            ).toEqual({ ids: rest.slice(0, PER_PAGE), total: ids.length, has_more: rest.length > PER_PAGE })
          }
        }
      } finally {
        await app.close()
      }
    })
  },
}
