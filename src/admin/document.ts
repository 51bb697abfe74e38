import fastifySwagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import { ErrorEnvelope } from '../errors.js'
import { ADMIN_TAG } from './admin-route.js'

/** The decorator `@fastify/swagger` puts on the admin context: ours, so no other document is touched. */
const ADMIN_DOCUMENT = 'workforceAdminOpenApi'

type Operation = { responses?: Record<string, unknown>; parameters?: unknown[] }

/**
 * The admin API's own OpenAPI 3.1 document, built from the schemas its routes validate and
 * serialize with, served at `<admin prefix>/openapi.json`. A document of its own, not a tag in
 * the public one: its audience is the host's team, and its authentication is the host's session.
 */
export async function registerAdminDocument(app: FastifyInstance, prefix: string): Promise<void> {
  await app.register(fastifySwagger, {
    mode: 'dynamic',
    decorator: ADMIN_DOCUMENT,
    hideUntagged: true,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Workforce integrations admin API',
        version: '1',
        description: [
          "One company's API keys, webhook endpoints, deliveries, modules, usage and audit trail, for the host's settings screens.",
          '',
          "Every request is authenticated by the host's own session (its `authorize` option). Changes (POST, PATCH, DELETE) must be sent as `application/json` with `X-Requested-With: workforce-admin` (or pass the host's CSRF check) and accept an `Idempotency-Key`.",
        ].join('\n'),
      },
      servers: [{ url: prefix === '' ? '/' : prefix }],
      tags: [{ name: ADMIN_TAG, description: 'The company-settings screens for integrations.' }],
      components: { schemas: { Error: ErrorEnvelope as never } },
    },
    transformObject: (documents) => {
      const document = (documents as { openapiObject: { paths?: Record<string, Record<string, Operation>> } }).openapiObject
      const error = { description: 'An error in the envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }
      for (const operations of Object.values(document.paths ?? {})) {
        for (const operation of Object.values(operations)) {
          operation.responses = { ...operation.responses, '4XX': error, '5XX': error }
        }
      }
      return document as never
    },
  })
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    const document = (app as unknown as Record<string, () => unknown>)[ADMIN_DOCUMENT]!()
    return reply.header('cache-control', 'no-cache').send(document)
  })
}
