import type { Kysely } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { openHostDatabase, type HostDatabase } from '../../examples/host-app/database.js'
import { TeamReader } from '../../examples/host-app/team-reader.js'
import { teamsResource } from '../../examples/host-app/teams.js'
import { EVENT_TYPES } from '../../src/index.js'
import { buildAdminApp, type AdminTestApp } from '../admin/admin-app.js'
import { seedDataset } from '../helpers/build.js'

// The admin API's catalogues are derived from the same declarations as the public API: a host's
// resource appears in `/scopes` (its module, its scope, a description from its routes) and in
// `/webhooks/event-types`, so the portal's pickers offer it. Over real HTTP.

describe("the admin API lists a host's own resource (teams)", () => {
  let db: Kysely<HostDatabase>
  let t: AdminTestApp

  beforeEach(async () => {
    db = (await openHostDatabase(':memory:')).db
    const adapter = createMemoryAdapter()
    await adapter.loadDataset(seedDataset())
    await adapter.modules.setActive(1, 'teams', true)
    t = await buildAdminApp(adapter, { api: { resources: [teamsResource(new TeamReader(db))] }, transport: 'http' })
  })

  afterEach(async () => {
    await t.close()
    await db.destroy()
  })

  it('GET /scopes has the teams module with teams:read, described by its routes', async () => {
    const response = await t.admin('GET', '/scopes')
    expect(response.statusCode, response.body).toBe(200)
    const groups = response.json().data as { module: string; enabled: boolean; scopes: { scope: string; description: string }[] }[]
    expect(groups.map((group) => group.module)).toEqual(['core', 'projects', 'todo', 'teams'])
    expect(groups.find((group) => group.module === 'teams')).toEqual({
      module: 'teams',
      enabled: true,
      scopes: [{ scope: 'teams:read', description: 'List teams, get one team' }],
    })
  })

  it('GET /scopes shows the teams module off for a company without it', async () => {
    const response = await t.admin('GET', '/scopes', undefined, { session: '2:u9:Hal Hudson' })
    const teams = (response.json().data as { module: string; enabled: boolean }[]).find((group) => group.module === 'teams')
    expect(teams).toMatchObject({ module: 'teams', enabled: false })
  })

  it("GET /webhooks/event-types lists the contract's event types, then teams.created, teams.updated and teams.deleted", async () => {
    const response = await t.admin('GET', '/webhooks/event-types')
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json().data).toEqual([...EVENT_TYPES, 'teams.created', 'teams.updated', 'teams.deleted'])
  })

  it('an endpoint can subscribe to teams.updated through the admin API, and a key can be made with teams:read', async () => {
    const endpoint = await t.admin('POST', '/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['teams.updated'] })
    expect(endpoint.statusCode, endpoint.body).toBe(201)
    expect(endpoint.json().data.events).toEqual(['teams.updated'])
    const key = await t.admin('POST', '/keys', { name: 'Team sync', scopes: ['teams:read'] })
    expect(key.statusCode, key.body).toBe(201)
    expect(key.json().data.scopes).toEqual(['teams:read'])
    const list = await t.api('GET', '/v1/teams', key.json().key as string)
    expect(list.statusCode, list.body).toBe(200)
  })
})
