import type { FastifyInstance } from 'fastify'
import { errorEnvelope } from '../errors.js'
import type { WorkforcePorts } from '../ports/index.js'
import { RESPONSE_HEADERS } from '../corridor/response-headers.js'

/** Readiness fails when the database has not answered within this. */
export const READINESS_TIMEOUT_MS = 1_000
/** A company id no tenant has: the readiness probe's lookup finds nothing, through an index. */
const PROBE_COMPANY_ID = 0

export interface Readiness {
  ready: boolean
  /** `ok`, `timeout` (no answer within the timeout) or `error` (the database refused). */
  storage: 'ok' | 'timeout' | 'error'
}

/**
 * Whether this instance can serve: the database answers a cheap indexed lookup within
 * `timeoutMs`. Exported so a host can mount it on its own health route.
 *
 * @example
 * app.get('/healthz', async (_request, reply) => {
 *   const readiness = await workforceReadiness(ports)
 *   return reply.code(readiness.ready ? 200 : 503).send(readiness)
 * })
 */
export async function workforceReadiness(ports: Pick<WorkforcePorts, 'storage'>, timeoutMs = READINESS_TIMEOUT_MS): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs)
  })
  const probe = ports.storage.company(PROBE_COMPANY_ID).then(
    () => 'ok' as const,
    () => 'error' as const,
  )
  try {
    const storage = await Promise.race([probe, timeout])
    return { ready: storage === 'ok', storage }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * `GET /health/live` (the process answers) and `GET /health/ready` (and its database does;
 * 503 in the envelope otherwise), for load balancers and orchestrators. Unauthenticated:
 * they say nothing about any tenant.
 */
export function registerHealthRoutes(app: FastifyInstance, readiness: () => Promise<Readiness>): void {
  app.get('/health/live', async (_request, reply) => reply.headers(RESPONSE_HEADERS).send({ status: 'ok' }))
  app.get('/health/ready', async (_request, reply) => {
    const result = await readiness()
    reply.headers(RESPONSE_HEADERS)
    if (result.ready) return reply.send({ status: 'ready', storage: result.storage })
    return reply.code(503).header('retry-after', '1').send(errorEnvelope('service_unavailable', `Not ready: storage ${result.storage}`, 503))
  })
}
