import { describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { adminContext } from '../../src/admin/admin-context.js'
import { adminStages } from '../../src/admin/stages.js'
import { ADMIN_RESOURCES } from '../../src/admin/routes/index.js'
import { API_ERROR_STATUS, ConflictError, NotFoundError, refusalAsApiError, REFUSAL_CODES, ValidationError, WorkforceRefusal } from '../../src/errors.js'
import { InvitationError } from '../../src/invitations/invitation-manager.js'
import { KeyManagementError } from '../../src/keys/key-manager.js'
import { EventPublishError } from '../../src/webhooks/event-publisher.js'
import { WebhookAdminError } from '../../src/webhooks/webhook-manager.js'
import { buildAdminApp, testAuthorize } from './admin-app.js'

describe('the admin corridor', () => {
  it('runs its stages in one ordered list: session, cross-site check, idempotency, then audit forwarding', async () => {
    const t = await buildAdminApp(createMemoryAdapter())
    try {
      const api = t.app.workforceApi
      expect(adminStages({ authorize: testAuthorize }, api).map((stage) => stage.name)).toEqual(['session', 'cross-site check', 'idempotency'])
      expect(adminStages({ authorize: testAuthorize, onAudit: () => {} }, api).map((stage) => stage.name)).toEqual([
        'session',
        'cross-site check',
        'idempotency',
        'audit forwarding',
      ])
    } finally {
      await t.close()
    }
  })

  it('declares its routes by resource, each route once', async () => {
    const t = await buildAdminApp(createMemoryAdapter())
    try {
      const context = adminContext(t.app.workforceApi)
      const routes = ADMIN_RESOURCES.flatMap((resource) => resource.routes(context).map((route) => `${route.method} ${route.url}`))
      expect(ADMIN_RESOURCES.map((resource) => resource.name)).toEqual(['meta', 'keys', 'endpoints', 'deliveries', 'usage', 'audit'])
      expect(new Set(routes).size).toBe(routes.length)
      expect(routes).toHaveLength(27)
    } finally {
      await t.close()
    }
  })
})

describe("the managers' refusals (one error model)", () => {
  const refusals = [
    new KeyManagementError('No API key with id x', 'not_found'),
    new KeyManagementError('Cannot enable a key that is revoked', 'invalid_transition'),
    new KeyManagementError('Unknown scope', 'invalid_input'),
    new WebhookAdminError('no webhooks port', 'unavailable'),
    new WebhookAdminError('disabled', 'invalid_transition'),
    new InvitationError('accepted', 'not_pending'),
    new InvitationError('member', 'already_member'),
    new EventPublishError('bad', 'invalid_input'),
  ]

  it('keep their names and reasons, and carry the catalogue code of their reason', () => {
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(WorkforceRefusal)
      expect(refusal).toBeInstanceOf(Error)
      expect(refusal.name).toBe(refusal.constructor.name)
      expect(refusal.apiCode).toBe(REFUSAL_CODES[refusal.reason])
    }
    expect(refusals.map((refusal) => [refusal.reason, refusal.apiCode, API_ERROR_STATUS[refusal.apiCode]])).toEqual([
      ['not_found', 'not_found', 404],
      ['invalid_transition', 'conflict', 409],
      ['invalid_input', 'validation_error', 422],
      ['unavailable', 'not_found', 404],
      ['invalid_transition', 'conflict', 409],
      ['not_pending', 'conflict', 409],
      ['already_member', 'conflict', 409],
      ['invalid_input', 'validation_error', 422],
    ])
  })

  it("add no code or statusCode of their own: a host's route and Fastify's error handler see them as before", () => {
    for (const refusal of refusals) {
      // The same own fields as before the error model: `reason`, then `name`.
      expect(Object.keys(refusal)).toEqual(['reason', 'name'])
      expect((refusal as unknown as { statusCode?: unknown }).statusCode).toBeUndefined()
      expect((refusal as unknown as { code?: unknown }).code).toBeUndefined()
    }
  })

  it('render as the catalogue error of their code, with the public message', () => {
    const notFound = refusalAsApiError(refusals[0] as WorkforceRefusal) as Error & { statusCode: number }
    expect(notFound).toBeInstanceOf(NotFoundError)
    expect([notFound.statusCode, notFound.message]).toEqual([404, 'No API key with id x'])
    const conflict = refusalAsApiError(refusals[1] as WorkforceRefusal) as Error & { statusCode: number }
    expect(conflict).toBeInstanceOf(ConflictError)
    expect(conflict.statusCode).toBe(409)
    const invalid = refusalAsApiError(refusals[2] as WorkforceRefusal)
    expect(invalid).toBeInstanceOf(ValidationError)
    expect((invalid as ValidationError).details).toEqual([{ field: 'body', message: 'Unknown scope' }])
    // The host's missing option is not the admin user's to read.
    expect(refusalAsApiError(refusals[3] as WorkforceRefusal).message).toBe('Webhooks are not set up for this API')
  })
})
