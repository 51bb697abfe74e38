import { Type } from '@sinclair/typebox'
import type { AdminContext } from '../admin-context.js'
import type { AdminResource, AdminRouteSpec } from '../admin-route.js'
import * as S from '../schemas.js'
import { EndpointParams } from './endpoints.js'
import { MAX_REPLAY_BATCH } from '../../webhooks/webhook-manager.js'

const DeliveryParams = Type.Object({ id: S.EndpointId, event_id: S.EventId }, { additionalProperties: false })

/** A period of retained events to send an endpoint: `since` inclusive, `until` exclusive. */
const ReplayBody = Type.Object(
  {
    since: Type.String({ format: 'date-time', description: 'The first instant of the period (inclusive).' }),
    until: Type.String({ format: 'date-time', description: 'The end of the period (exclusive); after since.' }),
  },
  {
    additionalProperties: false,
    description:
      'Every retained event of the company in the period, of a type the endpoint subscribes to, that it never got or got only as a ' +
      `failed delivery, is sent now; delivered and pending ones are left alone. At most ${MAX_REPLAY_BATCH} per call. A disabled ` +
      'endpoint gets them once enabled.',
  },
)

const ReplayAnswer = Type.Object({
  count: Type.Integer({ description: 'Deliveries made due by this call (created, or failed ones sent again).' }),
  more: Type.Boolean({ description: `More events of the period remain (at most ${MAX_REPLAY_BATCH} per call): call again with the same period.` }),
})

/** An endpoint's delivery log: its deliveries and their attempts, a payload as sent, redelivery, recovery and replay. */
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
      {
        method: 'POST',
        url: '/webhooks/endpoints/:id/replay',
        summary: 'Send the retained events of a period the endpoint missed',
        schema: { params: EndpointParams, body: ReplayBody, response: { 200: ReplayAnswer } },
        handler: async (request) => {
          const { id } = request.params as { id: string }
          await ownEndpoint(request, id)
          const { since, until } = request.body as typeof ReplayBody.static
          return webhooks.replay(id, { since: new Date(since), until: new Date(until) }, auditFor(request, 'webhook_deliveries.replayed', { since, until }))
        },
      },
    ]
  },
}
