import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { NotFoundError, ValidationError } from '../errors.js'
import { keyExpiryProblem, rotatedExpiry } from '../keys/key-manager.js'
import type { WorkforceApiDecorator } from '../plugin.js'
import { AUDIT_ACTIONS, type AuditAction, type AuditEntry, type AuditFor } from '../ports/audit-store.js'
import { PLATFORM_MODULES } from '../ports/module-registry.js'
import { SCOPE_MODULES } from '../scopes.js'
import { EVENT_TYPES } from '../webhooks/event-types.js'
import { auditId } from './audit-id.js'
import type { AdminSession } from './options.js'
import * as S from './schemas.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Audit entries handed to the stores by this request; forwarded to `onAudit` once it succeeded. */
    adminAudit: AuditEntry[] | null
  }
}

const HOUR_MS = 60 * 60 * 1000
const USAGE_DAYS = 7
export const ADMIN_TAG = 'Integrations admin'

const ROTATED = ' (rotated)'

/** A rotated key's name: `<name> (rotated)`, without piling up suffixes over several rotations. */
export function rotatedName(name: string | null): string {
  const base = name ?? 'Key'
  return base.endsWith(ROTATED) ? base : `${base.slice(0, 100 - ROTATED.length)}${ROTATED}`
}

/** A record as the admin API shows it: the company is the session's, never repeated. */
function withoutCompany<T extends { company_id: number }>({ company_id: _company, ...view }: T): Omit<T, 'company_id'> {
  return view
}

function session(request: FastifyRequest): AdminSession {
  return request.adminSession as AdminSession
}

/**
 * The admin API's routes (docs/admin-api.md), each scoped to the company `authorize` returned.
 * Another company's key or endpoint answers exactly like an unknown one.
 */
export function registerAdminRoutes(app: FastifyInstance, api: WorkforceApiDecorator): void {
  const { keys, webhooks, ports, clock } = api

  /** The audit entry of a change by this request's user: ids and facts only, never a secret. */
  const auditFor =
    (request: FastifyRequest, action: AuditAction, details: Record<string, unknown> = {}): AuditFor =>
    (targetId) => {
      const { companyId, actor } = session(request)
      // One instant for both: the id's time order is the entry's.
      const now = clock.now()
      const entry: AuditEntry = {
        id: auditId(now),
        company_id: companyId,
        at: new Date(now),
        actor_id: actor.id,
        actor_name: actor.name,
        ip: request.ip ?? null,
        action,
        target_type: action.startsWith('key.') ? 'api_key' : 'webhook_endpoint',
        target_id: targetId,
        details,
      }
      ;(request.adminAudit ??= []).push(entry)
      return entry
    }

  const ownKey = async (request: FastifyRequest, keyId: string) => {
    const record = await ports.keyStore.find(keyId)
    if (record === null || record.company_id !== session(request).companyId) throw new NotFoundError(`No API key with id ${keyId}`)
    return record
  }
  const ownEndpoint = async (request: FastifyRequest, id: string) => {
    const endpoint = await webhooks.get(id).catch((error: unknown) => {
      if ((error as { reason?: string }).reason === 'not_found') return null
      throw error
    })
    if (endpoint === null || endpoint.company_id !== session(request).companyId) throw new NotFoundError(`No webhook endpoint with id ${id}`)
    return endpoint
  }

  const KeyParams = Type.Object({ key_id: S.KeyId }, { additionalProperties: false })
  const EndpointParams = Type.Object({ id: S.EndpointId }, { additionalProperties: false })
  const tags = [ADMIN_TAG]

  app.get('/session', {
    schema: { tags, summary: 'Who is signed in', response: { 200: Type.Object({ company_id: Type.Integer(), actor: Type.Object({ id: Type.String(), name: Type.String() }) }) } },
    handler: async (request) => ({ company_id: session(request).companyId, actor: session(request).actor }),
  })

  const ModuleState = Type.Object({ module: Type.String(), enabled: Type.Boolean() })
  const moduleStates = (companyId: number) =>
    Promise.all(PLATFORM_MODULES.map(async (module) => ({ module, enabled: await ports.modules.isActive(companyId, module) })))

  app.get('/scopes', {
    schema: {
      tags,
      summary: 'The scopes a key can have, grouped by platform module',
      response: { 200: S.data(Type.Array(Type.Object({ module: Type.String(), enabled: Type.Boolean(), scopes: Type.Array(Type.Object({ scope: Type.String() })) }))) },
    },
    handler: async (request) => {
      const modules = await moduleStates(session(request).companyId)
      return {
        data: modules.map(({ module, enabled }) => ({
          module,
          enabled,
          scopes: Object.entries(SCOPE_MODULES)
            .filter(([, owner]) => owner === module)
            .map(([scope]) => ({ scope })),
        })),
      }
    },
  })

  app.get('/modules', {
    schema: { tags, summary: "The company's platform modules (read-only)", response: { 200: S.data(Type.Array(ModuleState)) } },
    handler: async (request) => ({ data: await moduleStates(session(request).companyId) }),
  })

  // Keys
  app.get('/keys', {
    schema: { tags, summary: "The company's API keys", response: { 200: S.data(Type.Array(S.Key)) } },
    handler: async (request) => ({ data: (await keys.list({ companyId: session(request).companyId })).map(withoutCompany) }),
  })

  const Created = Type.Object({ key: Type.String(), data: S.Key }, { additionalProperties: false })
  app.post('/keys', {
    schema: { tags, summary: 'Create a key (its plaintext is in this answer only)', body: S.CreateKeyBody, response: { 201: Created } },
    handler: async (request, reply) => {
      const body = request.body as typeof S.CreateKeyBody.static
      const expiresAt = body.expires_at === undefined || body.expires_at === null ? null : new Date(body.expires_at)
      // `date-time` allows an offset: 9999-12-31T23:59:59-01:00 is in year 10000 once in UTC.
      const expiryProblem = expiresAt === null ? null : keyExpiryProblem(expiresAt)
      if (expiryProblem !== null) throw new ValidationError([{ field: 'expires_at', message: expiryProblem }])
      if (expiresAt !== null && expiresAt.getTime() <= clock.now()) {
        throw new ValidationError([{ field: 'expires_at', message: 'must be in the future (a key made already expired could never be used)' }])
      }
      const created = await keys.create(
        {
          companyId: session(request).companyId,
          name: body.name,
          scopes: body.scopes as never,
          expiresAt,
          rateLimit: body.rate_limit ?? null,
        },
        auditFor(request, 'key.created', { name: body.name, scopes: body.scopes, expires_at: body.expires_at ?? null, rate_limit: body.rate_limit ?? null }),
      )
      reply.code(201)
      return { key: created.key, data: withoutCompany(created.info) }
    },
  })

  for (const action of ['disable', 'enable', 'revoke'] as const) {
    app.post(`/keys/:key_id/${action}`, {
      schema: { tags, summary: `${action[0]?.toUpperCase()}${action.slice(1)} a key`, params: KeyParams, body: S.Empty, response: { 200: S.data(S.Key) } },
      handler: async (request) => {
        const { key_id: keyId } = request.params as { key_id: string }
        await ownKey(request, keyId)
        const auditAction = `key.${action}d` as AuditAction
        return { data: withoutCompany(await keys[action](keyId, auditFor(request, auditAction))) }
      },
    })
  }

  app.post('/keys/:key_id/rotate', {
    schema: { tags, summary: 'Create a twin of a key (same scopes, lifetime and rate limit); revoke the old one once switched', params: KeyParams, body: S.Empty, response: { 201: Created } },
    handler: async (request, reply) => {
      const { key_id: keyId } = request.params as { key_id: string }
      const old = await ownKey(request, keyId)
      const name = rotatedName(old.name)
      // The twin lives as long as the old key was meant to, from now (clamped to the latest
      // storable expiry): rotating an expiring (or expired) key gives a usable one, and a key
      // without expiry stays without.
      const expiresAt = rotatedExpiry(old, clock.now())
      const created = await keys.create(
        { companyId: old.company_id, name, scopes: old.scopes as never, expiresAt, rateLimit: old.rate_limit },
        auditFor(request, 'key.created', { name, scopes: old.scopes, rotated_from: keyId }),
      )
      reply.code(201)
      return { key: created.key, data: withoutCompany(created.info) }
    },
  })

  // Webhook endpoints
  app.get('/webhooks/event-types', {
    schema: { tags, summary: 'The event types an endpoint can subscribe to', response: { 200: S.data(Type.Array(Type.String())) } },
    handler: async () => ({ data: [...EVENT_TYPES] }),
  })

  app.get('/webhooks/endpoints', {
    schema: { tags, summary: "The company's webhook endpoints", response: { 200: S.data(Type.Array(S.Endpoint)) } },
    handler: async (request) => ({ data: (await webhooks.list(session(request).companyId)).map(withoutCompany) }),
  })

  const WithSecret = Type.Object({ secret: Type.String(), data: S.Endpoint }, { additionalProperties: false })
  app.post('/webhooks/endpoints', {
    schema: { tags, summary: 'Create an endpoint (its signing secret is in this answer only)', body: S.CreateEndpointBody, response: { 201: WithSecret } },
    handler: async (request, reply) => {
      const body = request.body as typeof S.CreateEndpointBody.static
      const created = await webhooks.create(
        { companyId: session(request).companyId, url: body.url, events: body.events, description: body.description ?? null },
        auditFor(request, 'webhook_endpoint.created', { url: body.url, events: body.events }),
      )
      reply.code(201)
      return { secret: created.secret, data: withoutCompany(created.endpoint) }
    },
  })

  app.get('/webhooks/endpoints/:id', {
    schema: { tags, summary: 'One endpoint', params: EndpointParams, response: { 200: S.data(S.Endpoint) } },
    handler: async (request) => ({ data: withoutCompany(await ownEndpoint(request, (request.params as { id: string }).id)) }),
  })

  app.patch('/webhooks/endpoints/:id', {
    schema: { tags, summary: "Change an endpoint's URL, events or description", params: EndpointParams, body: S.UpdateEndpointBody, response: { 200: S.data(S.Endpoint) } },
    handler: async (request) => {
      const { id } = request.params as { id: string }
      await ownEndpoint(request, id)
      const body = request.body as typeof S.UpdateEndpointBody.static
      return { data: withoutCompany(await webhooks.update(id, body, auditFor(request, 'webhook_endpoint.updated', { ...body }))) }
    },
  })

  for (const action of ['enable', 'disable'] as const) {
    app.post(`/webhooks/endpoints/:id/${action}`, {
      schema: { tags, summary: `${action[0]?.toUpperCase()}${action.slice(1)} an endpoint`, params: EndpointParams, body: S.Empty, response: { 200: S.data(S.Endpoint) } },
      handler: async (request) => {
        const { id } = request.params as { id: string }
        await ownEndpoint(request, id)
        return { data: withoutCompany(await webhooks[action](id, auditFor(request, `webhook_endpoint.${action}d`))) }
      },
    })
  }

  app.delete('/webhooks/endpoints/:id', {
    schema: { tags, summary: 'Delete an endpoint with its delivery log', params: EndpointParams, response: { 204: Type.Null() } },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string }
      const endpoint = await ownEndpoint(request, id)
      await webhooks.delete(id, auditFor(request, 'webhook_endpoint.deleted', { url: endpoint.url }))
      reply.code(204)
    },
  })

  app.post('/webhooks/endpoints/:id/rotate-secret', {
    schema: { tags, summary: 'A new signing secret (the old one keeps signing for 24 hours)', params: EndpointParams, body: S.Empty, response: { 200: WithSecret } },
    handler: async (request) => {
      const { id } = request.params as { id: string }
      await ownEndpoint(request, id)
      const rotated = await webhooks.rotateSecret(id, auditFor(request, 'webhook_endpoint.secret_rotated'))
      return { secret: rotated.secret, data: withoutCompany(rotated.endpoint) }
    },
  })

  app.post('/webhooks/endpoints/:id/test', {
    schema: { tags, summary: 'Send a webhook.test event to this endpoint only', params: EndpointParams, body: S.Empty, response: { 202: Type.Object({ event_id: S.EventId }) } },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string }
      await ownEndpoint(request, id)
      const { eventId } = await webhooks.sendTest(id, auditFor(request, 'webhook_endpoint.test_sent'))
      reply.code(202)
      return { event_id: eventId }
    },
  })

  app.get('/webhooks/endpoints/:id/deliveries', {
    schema: {
      tags,
      summary: "An endpoint's deliveries with their attempts, newest first",
      params: EndpointParams,
      querystring: S.DeliveriesQuery,
      response: { 200: Type.Object({ data: Type.Array(S.Delivery), has_more: Type.Boolean() }) },
    },
    handler: async (request) => {
      const { id } = request.params as { id: string }
      await ownEndpoint(request, id)
      const query = request.query as typeof S.DeliveriesQuery.static
      const page = await webhooks.deliveries(id, {
        ...(query.limit === undefined ? {} : { limit: query.limit }),
        ...(query.before === undefined ? {} : { before: query.before }),
        ...(query.status === undefined ? {} : { status: query.status }),
        ...(query.event_type === undefined ? {} : { eventType: query.event_type }),
      })
      return { data: page.deliveries, has_more: page.has_more }
    },
  })

  const DeliveryParams = Type.Object({ id: S.EndpointId, event_id: S.EventId }, { additionalProperties: false })
  app.get('/webhooks/endpoints/:id/deliveries/:event_id/payload', {
    schema: { tags, summary: 'The body of a delivered event, as sent', params: DeliveryParams, response: { 200: Type.Object({}, { additionalProperties: true }) } },
    handler: async (request, reply) => {
      const { id, event_id: eventId } = request.params as { id: string; event_id: string }
      await ownEndpoint(request, id)
      const payload = await webhooks.eventPayload(id, eventId)
      return reply.type('application/json; charset=utf-8').serializer((body: string) => body).send(payload)
    },
  })

  app.post('/webhooks/endpoints/:id/deliveries/:event_id/redeliver', {
    schema: { tags, summary: 'Send an event to the endpoint again, now', params: DeliveryParams, body: S.Empty, response: { 202: S.Empty } },
    handler: async (request, reply) => {
      const { id, event_id: eventId } = request.params as { id: string; event_id: string }
      await ownEndpoint(request, id)
      await webhooks.redeliver(id, eventId, auditFor(request, 'webhook_delivery.redelivered', { event_id: eventId }))
      reply.code(202)
      return {}
    },
  })

  app.post('/webhooks/endpoints/:id/recover', {
    schema: { tags, summary: 'Send again every delivery that failed since a time', params: EndpointParams, body: S.RecoverBody, response: { 200: Type.Object({ count: Type.Integer() }) } },
    handler: async (request) => {
      const { id } = request.params as { id: string }
      await ownEndpoint(request, id)
      const { since } = request.body as { since: string }
      return webhooks.recover(id, new Date(since), auditFor(request, 'webhook_deliveries.recovered', { since }))
    },
  })

  // Usage and audit trail
  app.get('/usage', {
    schema: {
      tags,
      summary: 'Requests per key per hour over the last 7 days',
      response: { 200: Type.Object({ data: Type.Array(S.UsageRowView), since: Type.String({ format: 'date-time' }), recorded: Type.Boolean() }) },
    },
    handler: async (request) => {
      const now = clock.now()
      const since = new Date(now - (now % HOUR_MS) - USAGE_DAYS * 24 * HOUR_MS)
      if (ports.usage === undefined) return { data: [], since: since.toISOString(), recorded: false }
      const rows = await ports.usage.hourly(session(request).companyId, since)
      return {
        data: rows.map(withoutCompany).map((row) => ({ ...row, hour: row.hour.toISOString(), last_rate_limited_at: row.last_rate_limited_at?.toISOString() ?? null })),
        since: since.toISOString(),
        recorded: true,
      }
    },
  })

  app.get('/audit', {
    schema: { tags, summary: 'The audit trail of admin changes, newest first', querystring: S.AuditQuery, response: { 200: Type.Object({ data: Type.Array(S.AuditEntryView), has_more: Type.Boolean() }) } },
    handler: async (request) => {
      const query = request.query as typeof S.AuditQuery.static
      const audit = ports.audit
      if (audit === undefined) throw new NotFoundError('No audit trail is configured')
      const page = await audit.list(session(request).companyId, { limit: query.limit ?? 50, ...(query.before === undefined ? {} : { before: query.before }) })
      return {
        data: page.entries.map((entry) => ({
          id: entry.id,
          at: entry.at.toISOString(),
          actor: { id: entry.actor_id, name: entry.actor_name },
          ip: entry.ip,
          action: entry.action,
          target_type: entry.target_type,
          target_id: entry.target_id,
          details: entry.details,
        })),
        has_more: page.has_more,
      }
    },
  })
}

export { AUDIT_ACTIONS }
