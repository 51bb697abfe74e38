/**
 * Tenant isolation as a property (issue 8): for every route and every input that carries an
 * id, company 1's key gets the same answer for another company's id as for an id that never
 * existed (status, content type and body, byte for byte; where the body echoes the id it was
 * sent, the one id in place of the other), and no such request changes any data.
 */
import fc from 'fast-check'
import type { RawRequest, RawResponse } from '../helpers/http-client.js'
import { percentEncode, SPEC_QUERY, ID_FILTERS, type RouteInfo } from './arbitraries.js'
import { checkResponse, describeRequest, PREFIX, type AttackServer } from './harness.js'
import { foreignIds, idsOf, MAX_SEED_ID, pathKind, type IdKind } from './seed-ids.js'

/** One input of one route that carries an id. */
export interface ProbeSite {
  route: RouteInfo
  where: 'path' | 'query' | 'body'
  /** The query parameter or body field (`id` for the path). */
  name: string
  kind: IdKind
}

/** The id-carrying body fields of the write routes (issue 8), and what they name. */
const BODY_ID_FIELDS: Readonly<Record<string, Readonly<Record<string, IdKind>>>> = {
  createTodo: { list_id: 'lists', assigned_to: 'users', assignee_group_id: 'roles' },
  updateTodo: { list_id: 'lists', assigned_to: 'users', assignee_group_id: 'roles' },
  createUser: { role_ids: 'roles' },
}

/** Every probe site of the mounted routes. */
export function probeSites(routes: readonly RouteInfo[]): ProbeSite[] {
  const sites: ProbeSite[] = []
  for (const route of routes) {
    const kind = pathKind(route.url)
    if (kind !== undefined) sites.push({ route, where: 'path', name: 'id', kind })
    if (kind === undefined && (route.method === 'GET' || route.method === 'HEAD')) {
      for (const param of SPEC_QUERY[route.url] ?? []) {
        const filterKind = Object.hasOwn(ID_FILTERS, param) ? ID_FILTERS[param] : undefined
        if (filterKind !== undefined) sites.push({ route, where: 'query', name: param, kind: filterKind })
      }
    }
    for (const [field, fieldKind] of Object.entries(BODY_ID_FIELDS[route.operationId] ?? {})) sites.push({ route, where: 'body', name: field, kind: fieldKind })
  }
  return sites
}

/** A probe: sites of one route, each given a foreign id (or ids) and a never-existing one. */
export interface Probe {
  route: RouteInfo
  sites: ProbeSite[]
  /** Per site, the ids sent: [foreign, never]; role_ids may carry several. */
  ids: Array<{ foreign: number[]; never: number[] }>
  /** The valid rest of the request. */
  page: number | null
  perPage: number | null
  bearer: boolean
  /** For path writes on to-dos: which of company 1's to-dos a body probe patches. */
  ownTodo: number
  title: string
  email: string
}

const neverId = fc.oneof(fc.integer({ min: MAX_SEED_ID + 1, max: MAX_SEED_ID + 30 }), fc.integer({ min: 1_000_000, max: 2 ** 31 - 1 }))

function idsFor(site: ProbeSite): fc.Arbitrary<{ foreign: number[]; never: number[] }> {
  const foreign = foreignIds(site.kind)
  if (site.name === 'role_ids') {
    return fc
      .uniqueArray(fc.constantFrom(...foreign), { minLength: 1, maxLength: 4 })
      .chain((ids) => fc.uniqueArray(neverId, { minLength: ids.length, maxLength: ids.length }).map((never) => ({ foreign: ids, never })))
  }
  return fc.tuple(fc.constantFrom(...foreign), neverId).map(([f, n]) => ({ foreign: [f], never: [n] }))
}

/**
 * A probe: a path, query or body site (each kind as often as the others), alone or with more
 * sites of the same route probed at once.
 */
export function probeArbitrary(sites: readonly ProbeSite[]): fc.Arbitrary<Probe> {
  const kinds = [...new Set(sites.map((site) => site.where))]
  return fc.constantFrom(...kinds).chain((where) => fc.constantFrom(...sites.filter((site) => site.where === where))).chain((first) => {
    const route = first.route
    const others = sites.filter((site) => site.route === route && site !== first)
    return fc.subarray(others).chain((more) => {
      const chosen = [first, ...more]
      return fc.record({
        route: fc.constant(route),
        sites: fc.constant(chosen),
        ids: fc.tuple(...chosen.map(idsFor)),
        page: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
        perPage: fc.option(fc.integer({ min: 1, max: 100 }), { nil: null }),
        bearer: fc.boolean(),
        ownTodo: fc.constantFrom(...idsOf('todos', 1)),
        title: fc.string({ minLength: 1, maxLength: 20 }).filter((t) => t.trim() !== ''),
        email: fc.nat().map((n) => `probe.${n}@example.com`),
      })
    })
  })
}

/** The request of `probe` with each site's `which` ids. */
export function probeRequest(probe: Probe, which: 'foreign' | 'never', key: string): RawRequest {
  const value = (index: number) => probe.ids[index]?.[which] ?? []
  let path = probe.route.url
  const query: string[] = []
  const body: Record<string, unknown> = {}
  const { operationId } = probe.route
  if (operationId === 'createTodo') Object.assign(body, { title: probe.title, list_id: idsOf('lists', 1)[0], assigned_to: idsOf('users', 1)[0] })
  if (operationId === 'updateTodo') Object.assign(body, { title: probe.title })
  if (operationId === 'createUser') Object.assign(body, { email: probe.email, first_name: 'Probe', last_name: 'Tenant', role_ids: idsOf('roles', 1).slice(0, 2) })
  // A PATCH whose probes are all in the body patches one of company 1's own to-dos.
  if (operationId === 'updateTodo') path = path.replace(':id', String(probe.ownTodo))
  probe.sites.forEach((site, index) => {
    const ids = value(index)
    if (site.where === 'path') path = probe.route.url.replace(':id', String(ids[0]))
    if (site.where === 'query') query.push(`${site.name}=${ids[0]}`)
    if (site.where === 'body') body[site.name] = site.name === 'role_ids' ? [...(body.role_ids as number[]), ...ids] : ids[0]
  })
  const list = probe.route.method !== 'POST' && probe.route.method !== 'PATCH' && pathKind(probe.route.url) === undefined
  if (list && probe.page !== null) query.push(`page=${probe.page}`)
  if (list && probe.perPage !== null) query.push(`per_page=${probe.perPage}`)
  const write = probe.route.method === 'POST' || probe.route.method === 'PATCH'
  // Activate and deactivate take no body.
  const sendsBody = write && (operationId === 'createTodo' || operationId === 'updateTodo' || operationId === 'createUser')
  return {
    method: probe.route.method,
    path: `${path}${query.length === 0 ? '' : `?${query.map((pair) => pair.split('=').map(percentEncode).join('=')).join('&')}`}`,
    headers: {
      ...(probe.bearer ? { authorization: `Bearer ${key}` } : { 'x-api-key': key }),
      ...(sendsBody ? { 'content-type': 'application/json' } : {}),
    },
    ...(sendsBody ? { body: JSON.stringify(body) } : {}),
  }
}

/** `never`'s body with every never-existing id replaced by its foreign counterpart. */
function echoed(body: string, probe: Probe): string {
  let out = body
  probe.ids.forEach(({ foreign, never }) => {
    never.forEach((id, i) => {
      out = out.replace(new RegExp(`(?<![0-9])${id}(?![0-9])`, 'g'), String(foreign[i]))
    })
  })
  return out
}

export interface IsolationReport {
  probes: number
  requests: number
  byStatus: Record<string, number>
  /** Probes by site kind (a probe of several sites counts for each). */
  bySite: Record<string, number>
  sitesCovered: number
  /** Probes whose two answers differed only by the id they echo. */
  echoes: number
}

const READ_RESOURCES = ['users', 'employees', 'roles', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const

/** Runs the property; throws fast-check's report (seed, path, counterexample) on failure. */
export async function runIsolation(server: AttackServer, seed: number, numRuns: number): Promise<IsolationReport> {
  const keys = server.app.workforceApi.keys
  const key1 = (await keys.create({ companyId: 1, scopes: ['all'], expiresAt: null, name: null })).key
  const key2 = (await keys.create({ companyId: 2, scopes: ['all'], expiresAt: null, name: null })).key
  const routes: RouteInfo[] = server.app.workforceApi.routes.map((r) => ({ method: r.method, url: r.url.slice(PREFIX.length), operationId: r.operationId, scope: r.scope }))
  const sites = probeSites(routes)
  const report: IsolationReport = { probes: 0, requests: 0, byStatus: {}, bySite: {}, sitesCovered: sites.length, echoes: 0 }

  /** Everything a company can list, every page: what no probe may change. */
  const everything = async (key: string): Promise<string> => {
    const pages: string[] = []
    for (const resource of READ_RESOURCES) {
      for (let page = 1; page <= 20; page++) {
        const response = await server.api({ method: 'GET', path: `/v1/${resource}?per_page=100&page=${page}`, headers: { 'x-api-key': key } })
        if (response.status !== 200) throw new Error(`listing ${resource}: ${response.status} ${response.body}`)
        pages.push(response.body)
        if (page >= (JSON.parse(response.body) as { pagination: { total_pages: number } }).pagination.total_pages) break
      }
    }
    pages.push((await server.api({ method: 'GET', path: '/v1/company', headers: { 'x-api-key': key } })).body)
    return pages.join('\n')
  }
  const before = { company1: await everything(key1), company2: await everything(key2) }

  const send = async (request: RawRequest): Promise<RawResponse> => {
    const response = await server.api(request)
    report.requests++
    report.byStatus[response.status] = (report.byStatus[response.status] ?? 0) + 1
    checkResponse(request, response)
    return response
  }

  const property = fc.asyncProperty(probeArbitrary(sites), async (probe) => {
    report.probes++
    for (const site of probe.sites) report.bySite[`${site.where}:${site.name}`] = (report.bySite[`${site.where}:${site.name}`] ?? 0) + 1
    const foreignRequest = probeRequest(probe, 'foreign', key1)
    const neverRequest = probeRequest(probe, 'never', key1)
    const foreign = await send(foreignRequest)
    const never = await send(neverRequest)
    const same =
      foreign.status === never.status &&
      foreign.headers['content-type'] === never.headers['content-type'] &&
      (foreign.body === never.body || foreign.body === echoed(never.body, probe))
    if (!same) {
      throw new Error(
        `another company's id is answered differently from an id that never existed\n` +
          `  foreign: ${describeRequest(foreignRequest)}\n    -> ${foreign.status} ${foreign.body.slice(0, 500)}\n` +
          `  never:   ${describeRequest(neverRequest)}\n    -> ${never.status} ${never.body.slice(0, 500)}`,
      )
    }
    if (foreign.body !== never.body) report.echoes++
    if (foreignRequest.method !== 'GET' && foreignRequest.method !== 'HEAD' && foreign.status < 300) {
      throw new Error(`a write naming another company's id succeeded\n  ${describeRequest(foreignRequest)}\n  -> ${foreign.status} ${foreign.body.slice(0, 500)}`)
    }
  })
  await fc.assert(property, { seed, numRuns })

  const after = { company1: await everything(key1), company2: await everything(key2) }
  if (after.company2 !== before.company2) throw new Error("company 2's data changed while company 1 named its ids")
  if (after.company1 !== before.company1) throw new Error("company 1's data changed, though every probe was refused")
  return report
}
