import { Type } from '@sinclair/typebox'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { portsOf, workforceApi, WorkforceOptionError, type AnyResourceDeclaration } from '../../src/index.js'
import type { TeamFilter, TeamRecord } from '../../examples/host-app/teams.js'
import { teamsResource } from '../../examples/host-app/teams.js'
import type { ResourceReader } from '../../src/ports/storage.js'

// A host's declaration is checked at registration (docs/extending.md): `ready()` rejects with
// a WorkforceOptionError whose `option` names the field, never at the first request.

const reader: ResourceReader<TeamRecord, TeamFilter> = {
  list: async () => ({ rows: [], total: 0 }),
  get: async () => null,
}
const teams = teamsResource(reader)

let app: FastifyInstance | undefined
afterEach(async () => {
  await app?.close().catch(() => {})
  app = undefined
})

/** Registers `resources` on a fresh app and returns what `ready()` threw (or `undefined`). */
async function readyWith(resources: readonly unknown[]): Promise<unknown> {
  app = Fastify()
  app.register(workforceApi, { ...portsOf(createMemoryAdapter()), resources: resources as AnyResourceDeclaration[] })
  return app.ready().then(
    () => undefined,
    (error: unknown) => error,
  )
}

async function expectRefused(resources: readonly unknown[], option: string, problem: RegExp): Promise<void> {
  const error = await readyWith(resources)
  expect(error).toBeInstanceOf(WorkforceOptionError)
  expect((error as WorkforceOptionError).option).toBe(option)
  expect((error as WorkforceOptionError).message).toMatch(problem)
  expect((error as WorkforceOptionError).message).toContain(`option "${option}"`)
}

describe("a host's resource declaration, checked at registration", () => {
  it('the declaration of examples/host-app/teams.ts is accepted', async () => {
    expect(await readyWith([teams])).toBeUndefined()
    expect(app!.workforceApi.routes.map((route) => `${route.method} ${route.url}`)).toEqual(expect.arrayContaining(['GET /v1/teams', 'GET /v1/teams/:id']))
  })

  it("a declaration named after one of the contract's resources (todos) is refused on its name", async () => {
    await expectRefused([{ ...teams, name: 'todos', scope: 'todos:read' }], 'resources[0] (todos).name', /"todos" is already a resource of this API/)
  })

  it("a component named after one of the contract's schemas (Todo) is refused on its component", async () => {
    await expectRefused([{ ...teams, component: 'Todo' }], 'resources[0] (teams).component', /"Todo" is already a component of this API/)
  })

  it('a scope other than <name>:read is refused on its scope', async () => {
    await expectRefused([{ ...teams, scope: 'teams:write' }], 'resources[0] (teams).scope', /must be "teams:read"/)
    await expectRefused([{ ...teams, scope: 'users:read' }], 'resources[0] (teams).scope', /must be "teams:read"/)
  })

  it('events with an action other than created, updated or deleted are refused on events.actions', async () => {
    await expectRefused([{ ...teams, events: { actions: ['created', 'archived'] } }], 'resources[0] (teams).events.actions', /created, updated, deleted/)
  })

  it('a reader without get() is refused on list.reader', async () => {
    const listOnly = { list: reader.list }
    await expectRefused([{ ...teams, list: { ...teams.list, reader: () => listOnly } }], 'resources[0] (teams).list.reader', /list\(\) and get\(\)/)
  })

  it.each(['page', 'per_page', 'starting_after'])('a filter named %s, a parameter of every list, is refused on list.filters', async (name) => {
    const filters = { ...teams.list!.filters, [name]: Type.Optional(Type.Integer()) }
    await expectRefused([{ ...teams, list: { ...teams.list, filters } }], `resources[0] (teams).list.filters.${name}`, /is a parameter of every list/)
  })

  it('the second of two declarations is named by its index', async () => {
    const other = { ...teams, name: 'crews', component: 'Crew', module: 'teams', scope: 'crews:read' }
    await expectRefused([other, { ...teams, name: 'crews', component: 'Crew2', scope: 'crews:read' }], 'resources[1] (crews).name', /already a resource/)
  })
})
