import type { FastifyInstance, onRequestHookHandler, onResponseHookHandler, onSendHookHandler, preValidationHookHandler } from 'fastify'
import type { RouteSpec } from '../api/route-spec.js'

/** The route-level hooks a stage puts on one route, by Fastify lifecycle phase. */
export interface StageHooks {
  onRequest?: onRequestHookHandler
  preValidation?: preValidationHookHandler
  onSend?: onSendHookHandler
  onResponse?: onResponseHookHandler
}

/**
 * One room of the corridor every API request walks (see `CORRIDOR` and `corridorStages()` in
 * `./index.ts`, the one ordered list of stages). A stage only declares its hooks; the corridor
 * attaches them, in the corridor's order. What it can answer instead of the route is declared
 * beside it, as its `StageResponses`.
 */
export interface CorridorStage {
  /** Its name in `app.workforceApi.routes` and docs/architecture.md: its `StageResponses.stage`. */
  name: string
  /** Context-wide set-up, once, before any route is declared (request decorators, timers, plugins). */
  setup?(app: FastifyInstance): void | Promise<void>
  /** The hooks that guard `route`, or `null` where the stage does not apply to it. */
  hooksFor(route: RouteSpec): StageHooks | null
}

/**
 * A response header the reference document names, by its key in `components.headers`
 * (`HEADERS` in src/openapi/responses.ts). `Retry-After-In-Flight` is `Retry-After` as the
 * idempotency stage sends it, described apart.
 */
export type DocumentedHeader =
  | 'X-RateLimit-Limit'
  | 'X-RateLimit-Remaining'
  | 'X-RateLimit-Reset'
  | 'Retry-After'
  | 'Retry-After-In-Flight'
  | 'Idempotent-Replay'
  | 'Location'
  | 'WWW-Authenticate'
  | 'ETag'

/** Which routes a declared response or header concerns, read from the route's declaration. */
export type RouteCondition = (route: RouteSpec) => boolean

/** An error response a stage can give instead of the route's own answer. */
export interface StageResponse {
  status: number
  /** The envelope's `error.code` (src/errors.ts). */
  code: string
  /** The headers the stage sets on this response itself. */
  headers?: readonly DocumentedHeader[]
  /** The routes on which the stage can give it; every route when absent. */
  when?: RouteCondition
}

/**
 * Headers a stage sets on every response given from that stage on — its own, those of later
 * stages and the route's success — as the rate limit's `X-RateLimit-*` and the idempotency
 * stage's `Idempotent-Replay` on what it replays.
 */
export interface StageStamp {
  headers: readonly DocumentedHeader[]
  /** The statuses that carry them; every status when absent. */
  statuses?: (status: number) => boolean
  /** The routes on which the stage sets them; every route when absent. */
  when?: RouteCondition
}

/**
 * What one place of the corridor adds to a route's responses, declared next to its code.
 * src/openapi/responses.ts derives each operation's documented error statuses, and the
 * headers of each status and of each success, from `CORRIDOR` (`./index.ts`) in order: a
 * response lists the stamps of every stage up to and including its own, then its own headers.
 *
 * @example
 * export const AUTHORIZE_RESPONSES: StageResponses = {
 *   stage: 'authorize',
 *   responses: [{ status: 403, code: 'forbidden' }],
 * }
 */
export interface StageResponses {
  /** The stage's name (`CorridorStage.name`), or the name of a place with no route hooks (`validate`, `render`). */
  stage: string
  responses: readonly StageResponse[]
  stamps?: readonly StageStamp[]
  /**
   * The place answers for failures wherever they happen, before any stage stamped a header too
   * (the error handler's 5xx): its responses carry no stamp, only their own headers.
   */
  anywhere?: true
}
