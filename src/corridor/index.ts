import type { FastifyInstance, RouteOptions } from 'fastify'
import { CONDITIONAL_RESPONSES } from '../api/conditional.js'
import { routeSpecOf } from '../api/route-spec.js'
import type { KeyVerifier } from '../auth/key-verifier.js'
import type { ModuleCache } from '../auth/module-cache.js'
import type { ResourceCatalogue } from '../api/catalogue.js'
import { authenticate, AUTHENTICATE_RESPONSES } from './authenticate.js'
import { authorize, AUTHORIZE_RESPONSES } from './authorize.js'
import { idempotency, IDEMPOTENCY_RESPONSES, type IdempotencySettings } from './idempotency.js'
import { acceptJsonBodiesOnly, PARSE_BODY_RESPONSES } from './parse-body.js'
import { FAILED_AUTH_LIMIT_RESPONSES, RATE_LIMIT_RESPONSES, rateLimits, type RateLimitSettings } from './rate-limit.js'
import { FRAMEWORK_ERRORS_RESPONSES, handleError, handleNotFound, RENDER_RESPONSES } from './render.js'
import { setResponseHeaders } from './response-headers.js'
import type { CorridorStage, StageHooks, StageResponses } from './stage.js'
import { createValidatorCompiler, VALIDATE_RESPONSES } from './validate.js'

export interface CorridorDependencies {
  verifier: KeyVerifier
  modules: ModuleCache
  /** Which platform module each scope belongs to. */
  catalogue: Pick<ResourceCatalogue, 'moduleOf'>
  /** Present when the API takes writes. */
  idempotency?: IdempotencySettings
  /** Absent when the host turned rate limiting off (`rateLimit: false`). */
  rateLimit?: RateLimitSettings
}

/**
 * The corridor every API request walks, in order — written here once:
 *
 *   router → failed-auth limit → authenticate → rate limit → authorize → body parsing
 *     → idempotency (mutations) → validate → handler (a read: its tag, or 304); render answers
 *     for a failure anywhere
 *
 * Each entry is what that place can answer instead of the route (`StageResponses`, declared
 * beside its code); the reference document reads them from here (src/openapi/responses.ts).
 * The places that put route-level hooks on a route are built by `corridorStages()`, in this
 * order; the router and body parsing are Fastify's, validation (`./validate.ts`) and rendering
 * (`./render.ts`) are the context's schema compiler and error handler. Adding a stage is one
 * file, one line here and one in `corridorStages()`.
 */
export const CORRIDOR: readonly StageResponses[] = [
  FRAMEWORK_ERRORS_RESPONSES,
  FAILED_AUTH_LIMIT_RESPONSES,
  AUTHENTICATE_RESPONSES,
  RATE_LIMIT_RESPONSES,
  AUTHORIZE_RESPONSES,
  PARSE_BODY_RESPONSES,
  IDEMPOTENCY_RESPONSES,
  VALIDATE_RESPONSES,
  CONDITIONAL_RESPONSES,
  RENDER_RESPONSES,
]

/**
 * The stages that put route-level hooks on each route, in `CORRIDOR`'s order; a stage the
 * host turned off (`rateLimit: false`, no writes) is left out.
 */
export function corridorStages(deps: CorridorDependencies): CorridorStage[] {
  const limits = deps.rateLimit === undefined ? undefined : rateLimits(deps.rateLimit)
  const built: ReadonlyArray<CorridorStage | undefined> = [
    limits?.failedAuth,
    authenticate(deps.verifier),
    limits?.perKey,
    authorize(deps.modules, deps.catalogue),
    deps.idempotency === undefined ? undefined : idempotency(deps.idempotency),
  ]
  const byName = new Map(built.flatMap((stage) => (stage === undefined ? [] : [[stage.name, stage] as const])))
  for (const name of byName.keys()) {
    if (!CORRIDOR.some(({ stage }) => stage === name)) throw new Error(`fastify-workforce-api: corridor stage ${name} has no place in CORRIDOR`)
  }
  return CORRIDOR.flatMap(({ stage }) => byName.get(stage) ?? [])
}

/** One mounted route and the stages that guard it, as `app.workforceApi.routes` lists them. */
export interface RouteTableEntry {
  method: string
  /** With the prefix, e.g. `/api/public/v1/todos/:id`. */
  url: string
  operationId: string
  /** The scope the route needs; null on the events feed, which any valid key may call. */
  scope: string | null
  /** Names of the corridor stages on this route, in the order they run. */
  stages: readonly string[]
}

const REQUEST_PHASES = ['onRequest', 'preValidation'] as const
const RESPONSE_PHASES = ['onSend', 'onResponse'] as const

/**
 * Sets up the API's encapsulated context: validation, rendering and the response headers
 * (`./response-headers.ts`) for every route and for our 404s, and one
 * `onRoute` listener that puts the stages' hooks on each route in corridor order. A route
 * not declared through `mountRoute` fails registration: nothing in this context goes unguarded,
 * but for the child context `markUnguarded` names.
 */
export async function registerCorridor(app: FastifyInstance, stages: readonly CorridorStage[], table: RouteTableEntry[]): Promise<void> {
  app.setValidatorCompiler(createValidatorCompiler())
  app.setErrorHandler(handleError)
  app.setNotFoundHandler(handleNotFound)
  acceptJsonBodiesOnly(app)
  app.addHook('onRequest', setResponseHeaders)
  for (const stage of stages) await stage.setup?.(app)

  app.addHook('onRoute', function guardRoute(this: FastifyInstance, route) {
    if (this.hasDecorator(UNGUARDED)) return
    const spec = routeSpecOf(route)
    if (spec === undefined) {
      throw new Error(`fastify-workforce-api: route ${String(route.method)} ${route.url} was not declared with mountRoute(), so the corridor cannot guard it`)
    }
    const guarding = stages.flatMap((stage) => {
      const hooks = stage.hooksFor(spec)
      return hooks === null ? [] : [{ name: stage.name, hooks }]
    })
    attach(route, guarding.map(({ hooks }) => hooks))
    table.push({ method: String(route.method), url: route.url, operationId: spec.operationId, scope: spec.scope ?? null, stages: guarding.map(({ name }) => name) })
  })
}

const UNGUARDED = 'workforceApiUnguarded'

/**
 * Marks a child context of the API's whose routes need no API key: the OpenAPI document and
 * the reference page (`src/openapi/public-routes.ts`), and nothing else. Its routes pass no
 * stage of the corridor and are not in the route table.
 */
export function markUnguarded(app: FastifyInstance): void {
  app.decorate(UNGUARDED, true)
}

/**
 * The corridor's hooks run before any other route-level hook of a request phase, and its
 * `onSend` and `onResponse` hooks after the route's own, so a response is stored as it leaves.
 */
function attach(route: RouteOptions, hooks: readonly StageHooks[]): void {
  for (const phase of REQUEST_PHASES) {
    const ours = hooks.flatMap((stage) => (stage[phase] === undefined ? [] : [stage[phase]]))
    if (ours.length > 0) route[phase] = [...ours, ...asList(route[phase])] as never
  }
  for (const phase of RESPONSE_PHASES) {
    const ours = hooks.flatMap((stage) => (stage[phase] === undefined ? [] : [stage[phase]]))
    if (ours.length > 0) route[phase] = [...asList(route[phase]), ...ours] as never
  }
}

function asList<H>(existing: H | H[] | undefined): H[] {
  return existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
}
