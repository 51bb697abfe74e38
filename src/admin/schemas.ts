import { Type, type TSchema } from '@sinclair/typebox'

/** TypeBox schemas of the admin API (docs/admin-api.md); Fastify validates and serializes with them. */

const Time = Type.String({ format: 'date-time' })
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const KeyId = Type.String({ pattern: '^[0-9a-f]{16}$', description: 'The key id: 16 lower-case hex characters.' })
export const EndpointId = Type.String({ pattern: '^we_[a-z2-7]{24}$' })
export const EventId = Type.String({ pattern: '^evt_[a-z2-7]{24}$' })

export const Key = Type.Object(
  {
    key_id: KeyId,
    name: Nullable(Type.String()),
    scopes: Type.Array(Type.String()),
    state: Type.Union([Type.Literal('active'), Type.Literal('disabled'), Type.Literal('revoked'), Type.Literal('expired')]),
    expires_at: Nullable(Time),
    rate_limit: Nullable(Type.Integer()),
    created_at: Time,
    last_used_at: Nullable(Time),
  },
  { additionalProperties: false },
)

export const Endpoint = Type.Object(
  {
    id: EndpointId,
    url: Type.String(),
    description: Nullable(Type.String()),
    events: Type.Array(Type.String()),
    status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
    disabled_reason: Nullable(Type.Union([Type.Literal('manual'), Type.Literal('gone'), Type.Literal('failing')])),
    failing_since: Nullable(Time),
    consecutive_failures: Type.Integer({ minimum: 0, description: 'Failed attempts in a row since the last success; 0 while healthy.' }),
    // The circuit breaker: while set, deliveries wait until then and one probe is sent; null while closed.
    paused_until: Nullable(Time),
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: false },
)

const Attempt = Type.Object({
  number: Type.Integer(),
  attempted_at: Time,
  status_code: Nullable(Type.Integer()),
  duration_ms: Type.Integer(),
  response_body: Nullable(Type.String()),
  error: Nullable(Type.String()),
  succeeded: Type.Boolean(),
})

export const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')])

export const Delivery = Type.Object(
  {
    id: Type.Integer(),
    event_id: EventId,
    event_type: Type.String(),
    status: DeliveryStatus,
    attempts: Type.Integer(),
    next_attempt_at: Nullable(Time),
    created_at: Time,
    updated_at: Time,
    attempts_made: Type.Array(Attempt),
  },
  { additionalProperties: false },
)

export const AuditEntryView = Type.Object(
  {
    id: Type.String(),
    at: Time,
    actor: Type.Object({ id: Type.String(), name: Type.String() }),
    ip: Nullable(Type.String()),
    action: Type.String(),
    target_type: Type.Union([Type.Literal('api_key'), Type.Literal('webhook_endpoint')]),
    target_id: Type.String(),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: false },
)

export const UsageRowView = Type.Object({
  key_id: KeyId,
  hour: Time,
  requests: Type.Integer(),
  client_errors: Type.Integer(),
  server_errors: Type.Integer(),
  rate_limited: Type.Integer(),
  last_rate_limited_at: Nullable(Time),
  not_modified: Type.Integer({
    description: 'Answers with 304 Not Modified (a conditional GET whose copy was current), also counted in `requests`; 0 from a usage store that does not record them.',
  }),
})

/** One platform module's scopes, each with what it grants (`GET /scopes`, for a scope picker). */
export const ScopeGroup = Type.Object({
  module: Type.String(),
  enabled: Type.Boolean(),
  scopes: Type.Array(Type.Object({ scope: Type.String(), description: Type.String({ description: 'What the scope grants: the operations it allows, in their own words.' }) })),
})

export const Empty = Type.Object({}, { additionalProperties: false })

export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    scopes: Type.Array(Type.String(), { minItems: 1, maxItems: 32 }),
    expires_at: Type.Optional(
      Nullable(
        Type.String({
          format: 'date-time',
          description: 'When the key stops working: a future instant, at the latest 9999-12-31T23:59:59.999Z once in UTC; `null` or absent for never.',
        }),
      ),
    ),
    rate_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000_000 }))),
  },
  { additionalProperties: false },
)

export const CreateEndpointBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    events: Type.Array(Type.String(), { minItems: 1, maxItems: 64 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false },
)

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    events: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: 64 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const RecoverBody = Type.Object({ since: Time }, { additionalProperties: false })

export const DeliveriesQuery = Type.Object(
  {
    status: Type.Optional(DeliveryStatus),
    event_type: Type.Optional(Type.String({ pattern: '^[a-z_]+\\.[a-z_]+$', maxLength: 64 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    before: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
)

export const AuditQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    before: Type.Optional(Type.String({ pattern: '^aud_[a-z2-7]{24}$' })),
  },
  { additionalProperties: false },
)

export const data = <T extends TSchema>(schema: T) => Type.Object({ data: schema }, { additionalProperties: false })
