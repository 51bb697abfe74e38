import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DOCUMENT_FILE } from '../../scripts/openapi.js'
import { apiRoutes, CONTRACT } from '../../src/api/index.js'
import { eventFeedRoutes } from '../../src/api/events-feed.js'
import type { RouteSpec } from '../../src/api/route-spec.js'
import { CORRIDOR } from '../../src/corridor/index.js'
import type { StageResponses } from '../../src/corridor/stage.js'
import { errorHeadersOf, errorResponsesOf, errorStatusesOf, HEADERS, successHeadersOf } from '../../src/openapi/responses.js'
import { createMemoryAdapter } from '../../adapters/memory/index.js'

type Json = Record<string, any>

/** The declared routes of an API with writes: what the document describes. */
function declaredRoutes(): RouteSpec[] {
  const adapter = createMemoryAdapter()
  return [
    ...apiRoutes({
      storage: adapter.storage,
      writes: { writes: adapter.writes, clock: { now: () => Date.now() }, events: CONTRACT, invites: { sendInvite: async () => {} }, locationOf: (path) => path },
    }),
    // The events feed, mounted with a webhooks port; declared only (its handlers never run here).
    ...eventFeedRoutes({ store: adapter.webhooks, catalogue: CONTRACT, modules: undefined as never }),
  ]
}

const applies = (when: ((route: RouteSpec) => boolean) | undefined, route: RouteSpec) => when?.(route) ?? true

describe('the committed document shows what the corridor declares, where it declares it', () => {
  const document = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Json
  const routes = declaredRoutes()
  const operationOf = (route: RouteSpec): Json => document.paths[route.url.replace(/:(\w+)/g, '{$1}')][route.method.toLowerCase()]
  const errorStatusesIn = (route: RouteSpec) =>
    Object.keys(operationOf(route).responses)
      .map(Number)
      .filter((status) => status >= 400)
  /** The `components.responses` entry the operations point at for `status`. */
  const componentOf = (status: number): Json => {
    const refs = new Set(routes.flatMap((route) => operationOf(route).responses[String(status)]?.$ref ?? []))
    expect([...refs], String(status)).toHaveLength(1)
    return document.components.responses[([...refs][0] as string).split('/').pop() as string]
  }

  const declarations = CORRIDOR.flatMap((place) => place.responses.map((response) => ({ place: place.stage, ...response })))

  it.each(declarations.map((declared) => [`${declared.place} ${declared.status}`, declared] as const))(
    '%s: on exactly the operations its place declares it for (with the others that declare the status)',
    (_name, declared) => {
      const givers = declarations.filter((other) => other.status === declared.status)
      for (const route of routes) {
        const shown = errorStatusesIn(route).includes(declared.status)
        expect(shown, `${route.operationId} ${declared.status}`).toBe(givers.some((giver) => applies(giver.when, route)))
        if (applies(declared.when, route)) {
          expect(operationOf(route).responses[String(declared.status)].$ref, route.operationId).toMatch(/^#\/components\/responses\/\w+$/)
        }
      }
    },
  )

  it('every operation lists no error status that no place of the corridor declares for it', () => {
    for (const route of routes) {
      const declared = new Set(declarations.filter((response) => applies(response.when, route)).map(({ status }) => status))
      expect(errorStatusesIn(route).sort(), route.operationId).toEqual([...declared].sort())
    }
  })

  it.each(declarations.map((declared) => [`${declared.place} ${declared.status}`, declared] as const))(
    "%s: the status's component has its code, and the headers its place sets",
    (_name, declared) => {
      const component = componentOf(declared.status)
      expect(component.content['application/json'].example.error).toMatchObject({ code: declared.code, status: declared.status })
      for (const header of declared.headers ?? []) {
        expect(component.headers[HEADERS[header].name], `${declared.status} ${header}`).toEqual({ $ref: `#/components/headers/${header}` })
      }
    },
  )

  it("every success response carries exactly the headers the stages stamp on the route, and a 201 its Location", () => {
    const stamps = CORRIDOR.flatMap((place) => place.stamps ?? [])
    expect(stamps.length).toBeGreaterThan(0)
    for (const route of routes) {
      for (const status of Object.keys(route.schema.response).map(Number)) {
        const stamped = stamps.filter((stamp) => applies(stamp.when, route) && (stamp.statuses?.(status) ?? true)).flatMap((stamp) => stamp.headers)
        const expected = [...stamped, ...(status === 201 ? ['Location'] : [])].map((key) => HEADERS[key as keyof typeof HEADERS].name)
        expect(Object.keys(operationOf(route).responses[String(status)].headers), `${route.operationId} ${status}`).toEqual(expected)
      }
    }
  })
})

describe('deriving responses from the corridor', () => {
  const routes = declaredRoutes()
  const lists = routes.filter((route) => route.method === 'GET' && route.schema.params === undefined)
  const at = (index: number, place: StageResponses): StageResponses[] => [...CORRIDOR.slice(0, index), place, ...CORRIDOR.slice(index)]
  const indexOf = (stage: string) => CORRIDOR.findIndex((place) => place.stage === stage)

  it('a status a place declares shows on exactly the routes its condition names', () => {
    const corridor = at(indexOf('validate'), {
      stage: 'lists-only',
      responses: [{ status: 402, code: 'payment_required', when: (route) => route.method === 'GET' && route.schema.params === undefined }],
    })
    expect(lists.length).toBeGreaterThan(0)
    for (const route of routes) {
      expect(errorStatusesOf(route, corridor).includes(402), route.operationId).toBe(lists.includes(route))
      expect(errorStatusesOf(route, corridor).filter((status) => status !== 402)).toEqual(errorStatusesOf(route))
    }
  })

  it("a stamp reaches the responses of its own place and later ones, not earlier ones, and no place's that answers anywhere", () => {
    const stamping: StageResponses = { stage: 'stamping', responses: [], stamps: [{ headers: ['Location'] }] }
    const early = at(indexOf('authenticate'), stamping)
    const late = at(indexOf('authorize'), stamping)
    expect(errorHeadersOf(401, early)).toContain('Location')
    expect(errorHeadersOf(401, late)).not.toContain('Location')
    expect(errorHeadersOf(403, late)).toContain('Location')
    expect(errorHeadersOf(500, early)).not.toContain('Location')
    const route = routes.find((candidate) => candidate.method === 'GET') as RouteSpec
    expect(successHeadersOf(route, 200, late)).toContain('Location')
    expect(successHeadersOf(route, 200, CORRIDOR)).not.toContain('Location')
  })

  it('refuses a declared status without prose, and two codes for one status', () => {
    const teapot = at(indexOf('validate'), { stage: 'teapot', responses: [{ status: 418, code: 'teapot' }] })
    expect(() => errorResponsesOf(teapot)).toThrow('no prose for status 418')
    const recoded = at(indexOf('validate'), { stage: 'recoded', responses: [{ status: 403, code: 'not_allowed' }] })
    expect(() => errorResponsesOf(recoded)).toThrow('several codes for 403: forbidden, not_allowed')
  })

  it('refuses prose for a status no place declares', () => {
    const without = CORRIDOR.map((place) => (place.stage === 'parse-body' ? { ...place, responses: place.responses.filter(({ status }) => status !== 415) } : place))
    expect(() => errorResponsesOf(without)).toThrow('prose for status 415, which no place of the corridor declares')
  })
})
