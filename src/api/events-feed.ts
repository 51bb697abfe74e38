import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import type { AuthenticatedKey } from '../auth/key-verifier.js'
import type { ModuleCache } from '../auth/module-cache.js'
import { CursorExpiredError, ForbiddenError, ValidationError } from '../errors.js'
import type { WebhookStore } from '../ports/webhook-store.js'
import type { ResourceCatalogue } from './catalogue.js'
import { entityTag, SerializedAnswer } from './conditional.js'
import type { ExampleRequest } from './examples.js'
import { companyOf, type RouteSpec } from './route-spec.js'
import { NoQuery } from './wire.js'

export const DEFAULT_FEED_LIMIT = 100
export const MAX_FEED_LIMIT = 1_000
/** Positions one call examines at most per event asked for: a key that reads one rare type still moves on, at a bounded cost. */
const SCAN_PER_EVENT = 10
/** The tag of the feed's operations in the reference document. */
export const EVENTS_TAG = 'events'

const CURSOR_PREFIX = 'ec1_'
const CURSOR_BODY = /^ec1_[A-Za-z0-9_-]{1,44}$/ // base64url of at most 16 + 1 + 16 characters
const CURSOR_TEXT = /^(\d{1,16})\.(\d{1,16})$/
/** One message for every cursor this company's feed did not give (garbage, another company's, ahead of the feed): nothing to tell them apart. */
const NOT_A_CURSOR = 'is not a cursor of this feed'

/**
 * A feed position as the opaque cursor a client holds: the company and the position, so a cursor
 * is only ever read against the feed that gave it. Not a secret: it only names a place in the
 * company's own feed.
 */
export function encodeCursor(companyId: number, position: number): string {
  return CURSOR_PREFIX + Buffer.from(`${companyId}.${position}`).toString('base64url')
}

/** The position of `cursor` in `companyId`'s feed, or null if it is not a cursor of that feed. */
export function decodeCursor(cursor: string, companyId: number): number | null {
  if (!CURSOR_BODY.test(cursor)) return null
  const match = CURSOR_TEXT.exec(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('latin1'))
  if (match === null || Number(match[1]) !== companyId) return null
  const position = Number(match[2])
  return Number.isSafeInteger(position) ? position : null
}

const FeedQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Resume after this cursor: the `next_cursor` of an earlier answer, or the `cursor` of `GET /v1/events/cursor`. Omitted: from the oldest retained event.',
      }),
    ),
    types: Type.Optional(
      Type.String({
        maxLength: 2_000,
        description: 'Only these event types, comma-separated (e.g. `todos.created,todos.deleted`). Default: every type your key can read.',
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_FEED_LIMIT, default: DEFAULT_FEED_LIMIT, description: 'Events per answer.' })),
  },
  { additionalProperties: false },
)

/** One event as the feed lists it: byte for byte the body its webhook delivery carries. */
const FeedEventSchema = Type.Object(
  {
    id: Type.String({ description: 'The event id (`evt_…`), the same as the delivery\'s `webhook-id`.' }),
    type: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    company_id: Type.Integer(),
    data: Type.Object({}, { additionalProperties: true, description: 'The resource exactly as its GET returned it when the event happened (before a deletion, for `*.deleted`).' }),
    previous_attributes: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: 'On `*.updated` events: each field that changed, with its value before the change (docs/webhooks.md).' }),
    ),
  },
  { additionalProperties: true },
)

const FeedPageSchema = Type.Object({
  data: Type.Array(FeedEventSchema, { description: 'Events in feed order: the order their changes committed, the same for every call.' }),
  next_cursor: Type.String({ description: 'Pass as `after` to read on. Always present, also when `data` is empty: keep it and ask again later.' }),
  has_more: Type.Boolean({ description: 'Whether more events follow now; if false, wait before asking again.' }),
})

const FeedCursorSchema = Type.Object({
  data: Type.Object({
    cursor: Type.String({ description: 'The feed position now: every event from here on is after it.' }),
  }),
})

/** The requests whose answers are the reference document's examples (`npm run openapi`), after the resources' example writes. */
export const EVENT_FEED_EXAMPLES: Readonly<Record<string, ExampleRequest>> = {
  listEvents: { method: 'GET', path: '/v1/events', query: { limit: 2 } },
  getEventsCursor: { method: 'GET', path: '/v1/events/cursor' },
}

/** The reference document's prose for the feed's operations (they belong to no resource). */
export const EVENT_FEED_DOCS: Record<string, { description: string; responses: Record<number, string> }> = {
  listEvents: {
    description: [
      "Returns your company's events in the order their changes committed — creations, updates and deletions, from the API and from the product's own screens — with the same body a webhook delivery carries. The order never changes, and an event never appears before a position you have already read: follow `next_cursor` and you miss nothing.",
      'Events are kept for the retention period (30 days unless your provider chose otherwise). A cursor older than that answers 410 `cursor_expired`: sync again from scratch.',
      'To keep a copy: take `GET /v1/events/cursor`, read every list, then read this feed from that cursor, applying each event (a `*.deleted` removes the record).',
    ].join('\n\n'),
    responses: { 200: 'A page of events, and the cursor to read on from.' },
  },
  getEventsCursor: {
    description:
      'Returns the feed position now. Take it before a full read of the lists: the feed from this cursor then holds every change the full read might have missed, with no overlap window to guess.',
    responses: { 200: 'The cursor of the feed position now.' },
  },
}

export interface EventFeedContext {
  store: WebhookStore
  catalogue: ResourceCatalogue
  modules: ModuleCache
}

/**
 * `GET /v1/events` and `GET /v1/events/cursor`: the company's events, in the order their
 * changes committed, for a client that keeps a copy (docs/api.md, "The events feed"). Any valid
 * key may call them; each key sees the event types of the resources its scopes read, for modules
 * that are active. The feed's bodies are stored rendered, so a page is their concatenation.
 */
export function eventFeedRoutes(context: EventFeedContext): RouteSpec[] {
  const { store } = context
  return [
    {
      method: 'GET',
      url: '/v1/events',
      operationId: 'listEvents',
      summary: 'List events',
      tag: EVENTS_TAG,
      expiringCursor: true,
      schema: { querystring: FeedQuery, response: { 200: FeedPageSchema } },
      async handler(request) {
        const { after, types, limit = DEFAULT_FEED_LIMIT } = request.query as { after?: string; types?: string; limit?: number }
        const companyId = companyOf(request)
        const position = after === undefined ? undefined : decodeCursor(after, companyId)
        if (position === null) throw new ValidationError([{ field: 'after', message: NOT_A_CURSOR }])
        const readable = await readableTypes(request, context)
        const wanted = types === undefined ? readable : requestedTypes(types, readable, context.catalogue)
        if (wanted.length === 0) {
          // Nothing this key may read: the cursor still moves to the head, as a page of other types would.
          const head = await store.feedHead(companyId)
          if (position !== undefined && position > head) throw new ValidationError([{ field: 'after', message: NOT_A_CURSOR }])
          return feedAnswer(`{"data":[],"next_cursor":${JSON.stringify(encodeCursor(companyId, Math.max(head, position ?? 0)))},"has_more":false}`)
        }
        const page = await store.readFeed(companyId, { ...(position === undefined ? {} : { after: position }), types: wanted, limit, scan: limit * SCAN_PER_EVENT })
        if (page.expired) {
          throw new CursorExpiredError(
            'This cursor is older than the retained event history: some events after it are gone. Sync again from scratch: take GET /v1/events/cursor, read every list, then follow the feed from that cursor.',
          )
        }
        // A position the feed has not reached yet was never handed out.
        if (position !== undefined && position > page.head) throw new ValidationError([{ field: 'after', message: NOT_A_CURSOR }])
        const data = page.events.map((event) => event.payload).join(',')
        return feedAnswer(`{"data":[${data}],"next_cursor":${JSON.stringify(encodeCursor(companyId, page.next))},"has_more":${page.has_more}}`)
      },
    },
    {
      method: 'GET',
      url: '/v1/events/cursor',
      operationId: 'getEventsCursor',
      summary: 'Get the feed position now',
      tag: EVENTS_TAG,
      schema: { querystring: NoQuery, response: { 200: FeedCursorSchema } },
      async handler(request) {
        const companyId = companyOf(request)
        return { data: { cursor: encodeCursor(companyId, await store.feedHead(companyId)) } }
      },
    },
  ]
}

/** A feed page, already JSON (the stored bodies joined): sent as it is, tagged like every read. */
function feedAnswer(body: string): SerializedAnswer {
  return new SerializedAnswer(body, entityTag(body))
}

/** The event types `request`'s key may read: those of each resource whose read scope it holds, whose module is active. */
async function readableTypes(request: FastifyRequest, context: EventFeedContext): Promise<string[]> {
  const auth = request.workforceAuth as AuthenticatedKey
  const types: string[] = []
  for (const resource of context.catalogue.resources) {
    const actions = resource.events?.actions ?? []
    if (actions.length === 0 || !auth.scopes.has(resource.scope)) continue
    if (!(await context.modules.isActive(auth.companyId, resource.module))) continue
    types.push(...actions.map((action) => `${resource.name}.${action}`))
  }
  return types
}

/** `types` as asked, checked: an unknown type is a 422, a type the key cannot read a 403 (as the resource's own routes would answer). */
function requestedTypes(types: string, readable: readonly string[], catalogue: ResourceCatalogue): string[] {
  const asked = [...new Set(types.split(',').map((type) => type.trim()))]
  const unknown = asked.filter((type) => !catalogue.isEventType(type))
  if (unknown.length > 0) {
    throw new ValidationError([{ field: 'types', message: `unknown event type${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}` }])
  }
  const allowed = new Set(readable)
  const refused = asked.filter((type) => !allowed.has(type))
  if (refused.length > 0) {
    const resource = catalogue.resource((refused[0] as string).split('.')[0] as string)
    throw new ForbiddenError(`This API key cannot read ${refused.join(', ')}: it needs the ${resource?.scope} scope, and the ${resource?.module} module must be active`)
  }
  return asked
}
