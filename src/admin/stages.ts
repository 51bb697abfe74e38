import type { FastifyInstance, FastifyRequest, FastifyReply } from 'fastify'
import type { StageHooks } from '../corridor/stage.js'
import type { WorkforceApiDecorator } from '../plugin.js'
import { adminIdempotency, authorizeWith, refuseCrossSite } from './guard.js'
import type { WorkforceAdminOptions } from './options.js'

/** One room of the admin corridor: the hooks it puts on every admin route (`adminStages`). */
export interface AdminStage {
  /** Its name in docs/admin-api.md and in tests. */
  name: string
  hooks: StageHooks
}

const PHASES = ['onRequest', 'preValidation', 'onSend', 'onResponse'] as const

/**
 * The corridor every admin request walks, in order:
 *
 *   session (the host's `authorize`) → cross-site check (mutations) → idempotency (mutations)
 *     → validate → handler → render → audit forwarding (`onAudit`, after a success)
 *
 * Within each Fastify phase the hooks run in this list's order; validation and rendering are
 * the admin context's schema compiler and error handler (`./plugin.ts`). Adding a stage is
 * one line here.
 */
export function adminStages(options: WorkforceAdminOptions, api: WorkforceApiDecorator): AdminStage[] {
  const idempotency = adminIdempotency(api.ports.idempotency as NonNullable<typeof api.ports.idempotency>, api.clock)
  return [
    { name: 'session', hooks: { onRequest: authorizeWith(options.authorize) } },
    { name: 'cross-site check', hooks: { onRequest: refuseCrossSite(options.csrf) } },
    { name: 'idempotency', hooks: { preValidation: idempotency.claim, onSend: idempotency.record, onResponse: idempotency.stop } },
    ...(options.onAudit === undefined ? [] : [{ name: 'audit forwarding', hooks: { onResponse: forwardAudit(options.onAudit) } }]),
  ]
}

/** Puts `stages`' hooks on every route of `app` (the guarded context), phase by phase, in list order. */
export function registerAdminStages(app: FastifyInstance, stages: readonly AdminStage[]): void {
  for (const phase of PHASES) {
    for (const stage of stages) {
      const hook = stage.hooks[phase]
      if (hook !== undefined) app.addHook(phase as 'onRequest', hook as never)
    }
  }
}

/** Hands each audit entry of a successful change to the host's `onAudit`; its failure is logged, never the client's. */
function forwardAudit(onAudit: NonNullable<WorkforceAdminOptions['onAudit']>) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (reply.statusCode >= 300 || request.adminAudit === null) return
    for (const entry of request.adminAudit) {
      try {
        await onAudit(structuredClone(entry))
      } catch (error) {
        request.log.warn({ err: error, reqId: request.id }, 'workforce-admin: onAudit failed')
      }
    }
  }
}
