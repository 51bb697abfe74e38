import { Type } from '@sinclair/typebox'
import type { AdminContext } from '../admin-context.js'
import type { AdminResource, AdminRouteSpec } from '../admin-route.js'
import * as S from '../schemas.js'
import { EndpointParams } from './endpoints.js'

const DeliveryParams = Type.Object({ id: S.EndpointId, event_id: S.EventId }, { additionalProperties: false })

/** An endpoint's delivery log: its deliveries and their attempts, a payload as sent, redelivery and recovery. */
export const deliveries: AdminResource = {
  name: 'deliveries',
  routes: ({ api, auditFor, ownEndpoint }: AdminContext): AdminRouteSpec[] => {
    const { webhooks } = api
    return [
      {
        method: 'GET',
        url: '/webhooks/endpoints/:id/deliveries',
        summary: "An endpoint's deliveries with their attempts, newest first",
        schema: {
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
      },
      {
        method: 'GET',
        url: '/webhooks/endpoints/:id/deliveries/:event_id/payload',
        summary: 'The body of a delivered event, as sent',
        schema: { params: DeliveryParams, response: { 200: Type.Object({}, { additionalProperties: true }) } },
        handler: async (request, reply) => {
          const { id, event_id: eventId } = request.params as { id: string; event_id: string }
          await ownEndpoint(request, id)
          const payload = await webhooks.eventPayload(id, eventId)
          return reply.type('application/json; charset=utf-8').serializer((body: string) => body).send(payload)
        },
      },
      {
        method: 'POST',
        url: '/webhooks/endpoints/:id/deliveries/:event_id/redeliver',
        summary: 'Send an event to the endpoint again, now',
        schema: { params: DeliveryParams, body: S.Empty, response: { 202: S.Empty } },
        handler: async (request, reply) => {
          const { id, event_id: eventId } = request.params as { id: string; event_id: string }
          await ownEndpoint(request, id)
          await webhooks.redeliver(id, eventId, auditFor(request, 'webhook_delivery.redelivered', { event_id: eventId }))
          reply.code(202)
          return {}
        },
      },
      {
        method: 'POST',
        url: '/webhooks/endpoints/:id/recover',
        summary: 'Send again every delivery that failed since a time',
        schema: { params: EndpointParams, body: S.RecoverBody, response: { 200: Type.Object({ count: Type.Integer() }) } },
        handler: async (request) => {
          const { id } = request.params as { id: string }
          await ownEndpoint(request, id)
          const { since } = request.body as { since: string }
          return webhooks.recover(id, new Date(since), auditFor(request, 'webhook_deliveries.recovered', { since }))
        },
      },
    ]
  },
}
