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
 * One room of the corridor every API request walks (see `CORRIDOR` in `./index.ts`).
 * A stage only declares its hooks; the corridor attaches them, in the corridor's order.
 */
export interface CorridorStage {
  /** Its name in `app.workforceApi.routes` and docs/architecture.md. */
  name: string
  /** Context-wide set-up, once, before any route is declared (request decorators, timers, plugins). */
  setup?(app: FastifyInstance): void | Promise<void>
  /** The hooks that guard `route`, or `null` where the stage does not apply to it. */
  hooksFor(route: RouteSpec): StageHooks | null
}
