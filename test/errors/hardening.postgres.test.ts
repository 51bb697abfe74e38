import Fastify, { type FastifyInstance } from 'fastify'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { openPostgresAdapter, type PostgresAdapter } from '../../adapters/postgres/index.js'
import { workforceApi } from '../../src/index.js'
import { generateDataset } from '../../src/seed/generate.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { portsOf } from '../../src/ports/index.js'
import { withResponseChecks } from '../helpers/response-checks.js'

/** Inputs that passed validation and then made Postgres fail (500) before the bounds were checked. */
describePostgres('Postgres never sees a value it cannot store', () => {
  const database = useTestDatabase()
  let adapter: PostgresAdapter
  let app: FastifyInstance
  let key: string

  beforeAll(async () => {
    adapter = await openPostgresAdapter({ connectionString: database.current.url })
    await adapter.loadDataset(generateDataset())
    app = withResponseChecks(Fastify())
    await app.register(workforceApi, {
      prefix: '/api/public',
      ...portsOf(adapter),
    })
    key = (await app.workforceApi.keys.create({ companyId: 2, scopes: ['all'] })).key
  })
  afterAll(async () => {
    await app.close()
    await adapter.close()
  })

  const get = (url: string) => app.inject({ url: `/api/public/v1${url}`, headers: { 'x-api-key': key } })
  const post = (body: unknown) => app.inject({ method: 'POST', url: '/api/public/v1/todos', headers: { 'x-api-key': key }, payload: body as object })

  it('keeps date_to=9999-12-31 an open end in New York (its next midnight is in year 10000)', async () => {
    const shifts = await get('/shifts?date_to=9999-12-31&per_page=1')
    expect(shifts.statusCode, shifts.body).toBe(200)
    expect(shifts.json().pagination.total).toBe(45)
    expect((await get('/todos?due_to=9999-12-31&per_page=1')).statusCode).toBe(200)
  })

  it('answers year 0000 and out-of-range instants with 422', async () => {
    for (const url of ['/users?updated_since=0000-01-01T00:00:00Z', '/absences?date_from=0000-01-01', '/todos?due_from=0000-01-01']) {
      const res = await get(url)
      expect(res.statusCode, url).toBe(422)
    }
    const list = (await get('/todos?per_page=1')).json().data[0].list_id
    for (const due of [{ due_date: '9999-12-31T23:59:59.999-23:59' }, { due_date: '0000-01-01T00:00:00+01:00' }, { due_date: '0000-01-01', due_is_all_day: true }]) {
      const res = await post({ title: 'x', list_id: list, assignee_group_id: 46, ...due })
      expect(res.statusCode, JSON.stringify(due)).toBe(422)
      expect(res.json().error.details).toEqual([expect.objectContaining({ field: 'due_date' })])
    }
  })

  it('answers NUL characters with 422, never a driver error', async () => {
    expect((await get('/users?email=a%00b')).statusCode).toBe(422)
    const list = (await get('/todos?per_page=1')).json().data[0].list_id
    const res = await post({ title: 'a\u0000b', list_id: list, assignee_group_id: 46 })
    expect(res.statusCode).toBe(422)
    expect(res.json().error.details).toEqual([{ field: 'title', message: 'must not contain NUL characters or unpaired surrogates' }])
  })
})
