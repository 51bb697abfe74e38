import { Type, type TSchema } from '@sinclair/typebox'

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type (spec 6), each a POST our
 * dispatcher makes to the company's endpoint, with the signature headers and the payload
 * whose `data` is the resource's own GET schema (`components.schemas`).
 */

/** The signature headers of every delivery, for `components.parameters`. */
export const SIGNATURE_HEADERS = [
  {
    name: 'webhook-id',
    description: "The event's id (`evt_…`): the same on every attempt of this event, so a receiver can drop duplicates.",
    schema: { type: 'string', pattern: '^evt_[a-z2-7]{24}$' },
  },
  { name: 'webhook-timestamp', description: 'Unix time of this attempt, in seconds. Refuse a delivery more than 5 minutes away from your clock.', schema: { type: 'string', pattern: '^[0-9]{1,15}$' } },
  {
    name: 'webhook-signature',
    description:
      '`v1,` + base64 of HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with the base64-decoded part of your `whsec_` secret after the prefix. During a secret rotation two signatures are sent, separated by a space: accept the delivery if either matches. Compare in constant time.',
    schema: { type: 'string' },
  },
  { name: 'X-Service-Signature', description: 'The same value as `webhook-signature`.', schema: { type: 'string' } },
].map((header) => ({ ...header, in: 'header', required: true }))

/**
 * `{ id, type, created_at, company_id, data }` with `data` referencing the resource's schema, and
 * for an `*.updated` event the optional `previous_attributes`: any of the resource's top-level
 * `fields`, each referencing that field's schema in the resource's (the same rendering as `data`).
 */
export function eventPayloadSchema(type: string, resourceSchemaRef: string, fields: readonly string[] = []): TSchema {
  const previous: Record<string, TSchema> = type.endsWith('.updated')
    ? {
        previous_attributes: Type.Optional(
          // `id` never changes: an update's before and after are the same record.
          Type.Object(Object.fromEntries(fields.filter((field) => field !== 'id').map((field) => [field, Type.Optional(Type.Unsafe({ $ref: `${resourceSchemaRef}/properties/${field}` }))])), {
            additionalProperties: false,
            description:
              'What changed: each top-level field of `data` whose value differs from before the change, with its value before, rendered as GET rendered it then. Fields that did not change are left out; `updated_at` is listed whenever it moved. Present on every event of an API write; on an event the host publishes, only when the host gave the record before the change.',
          }),
        ),
      }
    : {}
  return Type.Object(
    {
      id: Type.String({ pattern: '^evt_[a-z2-7]{24}$', description: 'The event id; equals the `webhook-id` header.' }),
      type: Type.Literal(type),
      created_at: Type.String({ format: 'date-time', description: 'When the change was committed.' }),
      company_id: Type.Integer({ minimum: 1, description: 'Your company.' }),
      data: Type.Unsafe({
        $ref: resourceSchemaRef,
        description: type.endsWith('.deleted') ? 'The resource as GET returned it just before the deletion.' : 'The resource exactly as GET returns it after the change.',
      }),
      ...previous,
    },
    { additionalProperties: false },
  )
}

const VERB: Record<string, string> = { created: 'was created', updated: 'changed', deleted: 'was deleted' }

/** What the document says of each event's resource: where its schema lives, and one record in prose. */
export interface EventResource {
  schemaRef: string
  singular: string
  /** The top-level fields of its schema, in order: what an update's `previous_attributes` may list. */
  fields: readonly string[]
}

/** The document's `webhooks`: one entry per event type, in catalogue order. */
export function webhooksSection(eventTypes: readonly string[], resourceOf: (resource: string) => EventResource): Record<string, unknown> {
  const section: Record<string, unknown> = {}
  for (const type of eventTypes) {
    const resource = type.slice(0, type.lastIndexOf('.'))
    const action = type.slice(type.lastIndexOf('.') + 1)
    const { schemaRef, singular, fields } = resourceOf(resource)
    section[type] = {
      post: {
        operationId: `event_${type.replace('.', '_')}`,
        tags: ['webhooks'],
        summary: `${type}: a ${singular} ${VERB[action] ?? action}`,
        description: `Sent to every enabled endpoint of your company subscribed to \`${type}\` (or to \`*\`). Answer 2xx within 15 s; anything else is retried with exponential backoff (410 Gone disables the endpoint).`,
        parameters: SIGNATURE_HEADERS.map(({ name }) => ({ $ref: `#/components/parameters/${name}` })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: eventPayloadSchema(type, schemaRef, fields) } },
        },
        responses: {
          '2XX': { description: 'Received. Any 2xx status counts; the body is ignored.' },
          '410': { description: 'Gone: the endpoint is disabled at once and receives nothing more until re-enabled.' },
        },
      },
    }
  }
  return section
}
