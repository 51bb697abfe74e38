/**
 * The admin API's shapes (docs/admin-api.md), derived from `admin-api-types.ts`, which
 * openapi-typescript generates from the admin API's own OpenAPI document
 * (`docs/admin-openapi.json`, `npm run openapi`). Nothing here restates a field: a change of
 * the admin schemas changes these types, and a test fails while the generated files are stale.
 * Times are ISO 8601 UTC strings.
 */
import type { paths } from './admin-api-types'

type Method = 'get' | 'post' | 'patch' | 'delete'

/** The JSON body the admin API answers `path` and `method` with, for the success `status`. */
export type Answer<P extends keyof paths, M extends Method, S extends number> =
  NonNullable<paths[P][M]> extends { responses: infer R }
    ? S extends keyof R
      ? R[S] extends { content: { 'application/json': infer Body } }
        ? Body
        : never
      : never
    : never

/** The JSON body `path` and `method` take. */
export type RequestBody<P extends keyof paths, M extends Method> =
  NonNullable<paths[P][M]> extends { requestBody?: { content: { 'application/json': infer Body } } } ? Body : never

type Item<List> = List extends { data: Array<infer T> } ? T : never

export type Session = Answer<'/session', 'get', 200>

/** What the host configured: a key's default rate limit (null: off), which webhook URLs it accepts. */
export type Settings = Answer<'/settings', 'get', 200>

export type ScopeGroup = Item<Answer<'/scopes', 'get', 200>>

export type Key = Item<Answer<'/keys', 'get', 200>>

export type KeyState = Key['state']

/** `POST /keys` and `POST /keys/:key_id/rotate`: the plaintext is in this answer only. */
export type CreatedKey = Answer<'/keys', 'post', 201>

export type Endpoint = Item<Answer<'/webhooks/endpoints', 'get', 200>>

/** `POST /webhooks/endpoints` and `…/rotate-secret`: the secret is in this answer only. */
export type EndpointWithSecret = Answer<'/webhooks/endpoints', 'post', 201>

export type Delivery = Item<Answer<'/webhooks/endpoints/{id}/deliveries', 'get', 200>>

export type DeliveryStatus = Delivery['status']

export type Attempt = Delivery['attempts_made'][number]

/** `POST /webhooks/endpoints/:id/replay`: a period of retained events to send again, and the answer. */
export type ReplayPeriod = RequestBody<'/webhooks/endpoints/{id}/replay', 'post'>

export type ReplayAnswer = Answer<'/webhooks/endpoints/{id}/replay', 'post', 200>

export type AuditEntry = Item<Answer<'/audit', 'get', 200>>

/** One key's hour; `client_errors` counts 4xx answers, 429 included. */
export type UsageRow = Item<Answer<'/usage', 'get', 200>>

export type Usage = Answer<'/usage', 'get', 200>

/** The admin API's list envelope, `{ data }`. */
export interface List<T> {
  data: T[]
}

/** The admin API's page envelope, `{ data, has_more }` (deliveries, audit trail). */
export interface Page<T> {
  data: T[]
  has_more: boolean
}

/**
 * The envelopes above are generic so screens can share paging code; these lines fail to
 * compile if the document's answers stop having their shape.
 */
type Holds<T extends true> = T
type Known<T> = [T] extends [never] ? false : true
export type EnvelopeChecks = [
  Holds<Known<Session> & Known<Settings> & Known<ScopeGroup> & Known<Key> & Known<Endpoint> & Known<Delivery> & Known<AuditEntry> & Known<UsageRow>>,
  Holds<Answer<'/keys', 'get', 200> extends List<Key> ? true : false>,
  Holds<Answer<'/webhooks/endpoints', 'get', 200> extends List<Endpoint> ? true : false>,
  Holds<Answer<'/webhooks/endpoints/{id}/deliveries', 'get', 200> extends Page<Delivery> ? true : false>,
  Holds<Answer<'/audit', 'get', 200> extends Page<AuditEntry> ? true : false>,
  Holds<CreatedKey extends Answer<'/keys/{key_id}/rotate', 'post', 201> ? true : false>,
  Holds<EndpointWithSecret extends Answer<'/webhooks/endpoints/{id}/rotate-secret', 'post', 200> ? true : false>,
]
