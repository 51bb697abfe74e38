import { Type } from '@sinclair/typebox'
import { withoutCompany, type AdminContext } from '../admin-context.js'
import type { AdminResource, AdminRouteSpec } from '../admin-route.js'
import * as S from '../schemas.js'

export const EndpointParams = Type.Object({ id: S.EndpointId }, { additionalProperties: false })
const WithSecret = Type.Object({ secret: Type.String(), data: S.Endpoint }, { additionalProperties: false })

/** The company's webhook endpoints: the event catalogue, create (secret shown once), change, pause, delete, rotate, test. */
export const endpoints: AdminResource = {
  name: 'endpoints',
  routes: ({ api, session, auditFor, ownEndpoint }: AdminContext): AdminRouteSpec[] => {
    const { webhooks } = api
    const switches = (['enable', 'disable'] as const).map(
      (action): AdminRouteSpec => ({
        method: 'POST',
        url: `/webhooks/endpoints/:id/${action}`,
        summary: `${action[0]?.toUpperCase()}${action.slice(1)} an endpoint`,
        schema: { params: EndpointParams, body: S.Empty, response: { 200: S.data(S.Endpoint) } },
        handler: async (request) => {
          const { id } = request.params as { id: string }
          await ownEndpoint(request, id)
          return { data: withoutCompany(await webhooks[action](id, auditFor(request, `webhook_endpoint.${action}d`))) }
        },
      }),
    )
    return [
      {
        method: 'GET',
        url: '/webhooks/event-types',
        summary: 'The event types an endpoint can subscribe to',
        schema: { response: { 200: S.data(Type.Array(Type.String())) } },
        handler: async () => ({ data: [...api.resources.eventTypes] }),
      },
      {
        method: 'GET',
        url: '/webhooks/endpoints',
        summary: "The company's webhook endpoints",
        schema: { response: { 200: S.data(Type.Array(S.Endpoint)) } },
        handler: async (request) => ({ data: (await webhooks.list(session(request).companyId)).map(withoutCompany) }),
      },
      {
        method: 'POST',
        url: '/webhooks/endpoints',
        summary: 'Create an endpoint (its signing secret is in this answer only)',
        schema: { body: S.CreateEndpointBody, response: { 201: WithSecret } },
        handler: async (request, reply) => {
          const body = request.body as typeof S.CreateEndpointBody.static
          const created = await webhooks.create(
            { companyId: session(request).companyId, url: body.url, events: body.events, description: body.description ?? null },
            auditFor(request, 'webhook_endpoint.created', { url: body.url, events: body.events }),
          )
          reply.code(201)
          return { secret: created.secret, data: withoutCompany(created.endpoint) }
        },
      },
      {
        method: 'GET',
        url: '/webhooks/endpoints/:id',
        summary: 'One endpoint',
        schema: { params: EndpointParams, response: { 200: S.data(S.Endpoint) } },
        handler: async (request) => ({ data: withoutCompany(await ownEndpoint(request, (request.params as { id: string }).id)) }),
      },
      {
        method: 'PATCH',
        url: '/webhooks/endpoints/:id',
        summary: "Change an endpoint's URL, events or description",
        schema: { params: EndpointParams, body: S.UpdateEndpointBody, response: { 200: S.data(S.Endpoint) } },
        handler: async (request) => {
          const { id } = request.params as { id: string }
          await ownEndpoint(request, id)
          const body = request.body as typeof S.UpdateEndpointBody.static
          return { data: withoutCompany(await webhooks.update(id, body, auditFor(request, 'webhook_endpoint.updated', { ...body }))) }
        },
      },
      ...switches,
      {
        method: 'DELETE',
        url: '/webhooks/endpoints/:id',
        summary: 'Delete an endpoint with its delivery log',
        schema: { params: EndpointParams, response: { 204: Type.Null() } },
        handler: async (request, reply) => {
          const { id } = request.params as { id: string }
          const endpoint = await ownEndpoint(request, id)
          await webhooks.delete(id, auditFor(request, 'webhook_endpoint.deleted', { url: endpoint.url }))
          reply.code(204)
        },
      },
      {
        method: 'POST',
        url: '/webhooks/endpoints/:id/rotate-secret',
        summary: 'A new signing secret (the old one keeps signing for 24 hours)',
        schema: { params: EndpointParams, body: S.Empty, response: { 200: WithSecret } },
        handler: async (request) => {
          const { id } = request.params as { id: string }
          await ownEndpoint(request, id)
          const rotated = await webhooks.rotateSecret(id, auditFor(request, 'webhook_endpoint.secret_rotated'))
          return { secret: rotated.secret, data: withoutCompany(rotated.endpoint) }
        },
      },
      {
        method: 'POST',
        url: '/webhooks/endpoints/:id/test',
        summary: 'Send a webhook.test event to this endpoint only',
        schema: { params: EndpointParams, body: S.Empty, response: { 202: Type.Object({ event_id: S.EventId }) } },
        handler: async (request, reply) => {
          const { id } = request.params as { id: string }
          await ownEndpoint(request, id)
          const { eventId } = await webhooks.sendTest(id, auditFor(request, 'webhook_endpoint.test_sent'))
          reply.code(202)
          return { event_id: eventId }
        },
      },
    ]
  },
}
