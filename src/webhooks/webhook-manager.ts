import { WorkforceRefusal } from '../errors.js'
import type { AuditFor } from '../ports/audit-store.js'
import type { Clock } from '../ports/clock.js'
import type {
  DeliveryPage,
  WebhookDeliveryStatus,
  WebhookEndpointChanges,
  WebhookEndpointRecord,
  WebhookStore,
} from '../ports/webhook-store.js'
import { checkDestination, WebhookDestinationError, type DestinationPolicy } from './destination.js'
import { ALL_EVENTS, EventSubscriptionError } from '../events/event-types.js'
import { HEALTHY } from './breaker.js'
import { CONTRACT } from '../api/index.js'
import type { ResourceCatalogue } from '../api/catalogue.js'
import { newEventId, randomId } from '../events/event-id.js'
import type { SecretBox } from './secret-box.js'
import { generateWebhookSecret } from './signature.js'

/** How long a rotated-out secret keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000
export const MAX_URL_LENGTH = 2_048
export const MAX_DESCRIPTION_LENGTH = 500
export const DEFAULT_DELIVERY_PAGE = 20
export const MAX_DELIVERY_PAGE = 100
/** The type of the event `sendTest` sends: never subscribed to, sent to one endpoint on request. */
export const TEST_EVENT_TYPE = 'webhook.test'
/**
 * Deliveries one `replay` call makes due, at most: one short transaction (SQLite's one writer
 * is held for milliseconds), and a bounded burst for the dispatcher. A longer period takes
 * more calls (`more`), each continuing where the last stopped.
 */
export const MAX_REPLAY_BATCH = 1_000
const EVENT_ID = /^evt_[a-z2-7]{24}$/
const DELIVERY_STATUSES: readonly WebhookDeliveryStatus[] = ['pending', 'delivered', 'failed']

/** Which of an endpoint's deliveries to list: newest first, `before` a delivery id. */
export interface DeliveryFilter {
  limit?: number
  before?: number
  status?: WebhookDeliveryStatus
  eventType?: string
}

/**
 * An endpoint as the host sees it: the stored record without its secrets and the breaker's
 * internal pause length. Its health: `failing_since`, `consecutive_failures` and `paused_until`
 * (the breaker is open while set: deliveries wait until then, then one probe is sent).
 */
export type WebhookEndpoint = Omit<WebhookEndpointRecord, 'secret' | 'previous_secret' | 'previous_secret_expires_at' | 'pause_ms'>

export function endpointView(record: WebhookEndpointRecord): WebhookEndpoint {
  const { id, company_id, url, description, events, status, disabled_reason, failing_since, consecutive_failures, paused_until, created_at, updated_at } = record
  return { id, company_id, url, description, events, status, disabled_reason, failing_since, consecutive_failures, paused_until, created_at, updated_at }
}

/**
 * Why a webhook administration call was refused:
 * - `not_found`: no endpoint (or event) with that id;
 * - `invalid_input`: a bad company id, URL, destination, event list, description or date;
 * - `invalid_transition`: not allowed in the endpoint's state (a test event to a disabled one);
 * - `unavailable`: the plugin has no webhook store, or no `webhookOptions.secretKey`.
 */
export class WebhookAdminError extends WorkforceRefusal<'not_found' | 'invalid_input' | 'invalid_transition' | 'unavailable'> {
  constructor(message: string, reason: 'not_found' | 'invalid_input' | 'invalid_transition' | 'unavailable') {
    super(message, reason)
    this.name = 'WebhookAdminError'
  }

  /** `unavailable` names the host's missing option: its users read only that webhooks are not set up. */
  override get publicMessage(): string {
    return this.reason === 'unavailable' ? 'Webhooks are not set up for this API' : this.message
  }
}

export interface CreateEndpointInput {
  companyId: number
  url: string
  /** Event types, or `['*']` for all. */
  events: readonly string[]
  description?: string | null
}

export interface UpdateEndpointInput {
  url?: string
  events?: readonly string[]
  description?: string | null
}

interface ManagerDeps {
  store: WebhookStore
  box: SecretBox
  clock: Clock
  policy: DestinationPolicy
  /** The event types an endpoint may subscribe to: the plugin's catalogue (with a host's resources); the contract's by default. */
  events?: Pick<ResourceCatalogue, 'normaliseSubscriptions' | 'eventTypes'>
  /** Tells this instance's dispatcher that deliveries became due (redeliver, recover, enable). */
  wake: () => void
}

/**
 * `app.workforceApi.webhooks`: the host's company-settings screens manage endpoints through it.
 * Secrets are returned once (create, rotate) and stored sealed.
 *
 * @example
 * const { endpoint, secret } = await app.workforceApi.webhooks.create({ companyId: 1, url: 'https://example.com/hooks', events: ['*'] })
 */
export class WebhookManager {
  readonly #deps: ManagerDeps | undefined
  readonly #missing: string

  constructor(deps: ManagerDeps | undefined, missing = 'Webhooks need a webhook store (the "webhooks" port) and webhookOptions.secretKey') {
    this.#deps = deps
    this.#missing = missing
  }

  /** Creates an enabled endpoint. @returns it, and its signing secret: shown this once. */
  async create(input: CreateEndpointInput, audit?: AuditFor): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const { store, box, clock, policy } = this.#ready()
    const companyId = checkCompany(input?.companyId)
    const url = await checkUrl(input.url, policy)
    const events = checkEvents(input.events, this.#deps?.events ?? CONTRACT)
    const description = checkDescription(input.description ?? null)
    const id = randomId('we_')
    const secret = generateWebhookSecret()
    const now = new Date(clock.now())
    const record: WebhookEndpointRecord = {
      id,
      company_id: companyId,
      url,
      description,
      events,
      status: 'enabled',
      disabled_reason: null,
      secret: box.seal(secret, id),
      previous_secret: null,
      previous_secret_expires_at: null,
      ...HEALTHY,
      created_at: now,
      updated_at: now,
    }
    await store.createEndpoint(record, audit?.(id))
    return { endpoint: endpointView(record), secret }
  }

  /** The company's endpoints, oldest first. */
  async list(companyId: number): Promise<WebhookEndpoint[]> {
    const { store } = this.#ready()
    return (await store.listEndpoints(checkCompany(companyId))).map(endpointView)
  }

  async get(id: string): Promise<WebhookEndpoint> {
    return endpointView(await this.#endpoint(id))
  }

  /** Changes the URL (checked like at creation), the subscriptions or the description. */
  async update(id: string, input: UpdateEndpointInput, audit?: AuditFor): Promise<WebhookEndpoint> {
    const { store, clock, policy } = this.#ready()
    await this.#endpoint(id)
    const changes: WebhookEndpointChanges = {}
    if (input?.url !== undefined) changes.url = await checkUrl(input.url, policy)
    if (input?.events !== undefined) changes.events = checkEvents(input.events, this.#deps?.events ?? CONTRACT)
    if (input?.description !== undefined) changes.description = checkDescription(input.description)
    return endpointView(orNotFound(await store.updateEndpoint(id, changes, new Date(clock.now()), audit?.(id)), id))
  }

  /** Enables a disabled endpoint. Deliveries failed while it was disabled stay failed: `recover` sends them. */
  async enable(id: string, audit?: AuditFor): Promise<WebhookEndpoint> {
    const { store, clock } = this.#ready()
    await this.#endpoint(id)
    await store.enableEndpoint(id, new Date(clock.now()), audit?.(id))
    return this.get(id)
  }

  /** Disables an endpoint; its pending deliveries fail (and can be recovered after `enable`). */
  async disable(id: string, audit?: AuditFor): Promise<WebhookEndpoint> {
    const { store, clock } = this.#ready()
    await this.#endpoint(id)
    await store.disableEndpoint(id, 'manual', new Date(clock.now()), audit?.(id))
    return this.get(id)
  }

  /** Deletes the endpoint with its delivery history. */
  async delete(id: string, audit?: AuditFor): Promise<void> {
    const { store } = this.#ready()
    if (!(await store.deleteEndpoint(checkId(id), audit?.(id)))) throw notFound(id)
  }

  /**
   * A new signing secret, returned once. The previous one keeps signing beside it for 24 hours
   * (every delivery carries both signatures), so receivers can switch without losing any.
   */
  async rotateSecret(id: string, audit?: AuditFor): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const { store, box, clock } = this.#ready()
    const current = await this.#endpoint(id)
    const now = clock.now()
    const secret = generateWebhookSecret()
    const updated = await store.updateEndpoint(
      id,
      { secret: box.seal(secret, id), previous_secret: current.secret, previous_secret_expires_at: new Date(now + ROTATION_OVERLAP_MS) },
      new Date(now),
      audit?.(id),
    )
    return { endpoint: endpointView(orNotFound(updated, id)), secret }
  }

  /** The endpoint's deliveries with their attempts, newest first; pass the last `id` as `before` for the next page. */
  async deliveries(id: string, page: DeliveryFilter = {}): Promise<DeliveryPage> {
    const { store } = this.#ready()
    await this.#endpoint(id)
    const limit = page.limit ?? DEFAULT_DELIVERY_PAGE
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_DELIVERY_PAGE) throw invalid(`limit must be an integer from 1 to ${MAX_DELIVERY_PAGE}`)
    if (page.before !== undefined && !(Number.isSafeInteger(page.before) && page.before > 0)) throw invalid('before must be a delivery id')
    if (page.status !== undefined && !DELIVERY_STATUSES.includes(page.status)) throw invalid(`status must be one of ${DELIVERY_STATUSES.join(', ')}`)
    if (page.eventType !== undefined && (typeof page.eventType !== 'string' || !/^[a-z_]+\.[a-z_]+$/.test(page.eventType))) throw invalid('eventType must be an event type')
    return store.listDeliveries(id, {
      limit,
      ...(page.before === undefined ? {} : { before: page.before }),
      ...(page.status === undefined ? {} : { status: page.status }),
      ...(page.eventType === undefined ? {} : { event_type: page.eventType }),
    })
  }

  /**
   * Sends a `webhook.test` event to this endpoint only, through the real delivery path (signed,
   * retried, logged like any delivery). @returns the event's id.
   */
  async sendTest(id: string, audit?: AuditFor): Promise<{ eventId: string }> {
    const deps = this.#ready()
    const endpoint = await this.#endpoint(id)
    // A disabled endpoint receives nothing; a test would wait, unsent, until it is enabled.
    if (endpoint.status !== 'enabled') throw new WebhookAdminError(`Webhook endpoint ${id} is disabled; enable it to send a test event`, 'invalid_transition')
    const now = new Date(deps.clock.now())
    const eventId = newEventId()
    const payload = JSON.stringify({
      id: eventId,
      type: TEST_EVENT_TYPE,
      created_at: now.toISOString(),
      company_id: endpoint.company_id,
      data: { endpoint_id: id, message: 'A test event sent from the company settings. It changes nothing.' },
    })
    const event = { id: eventId, company_id: endpoint.company_id, type: TEST_EVENT_TYPE, resource_id: 0, occurred_at: now, payload }
    if (!(await deps.store.sendTest(id, event, now, audit?.(id)))) throw notFound(id)
    deps.wake()
    return { eventId }
  }

  /** The body of event `eventId` as delivered to the endpoint, or not_found. */
  async eventPayload(id: string, eventId: string): Promise<string> {
    const { store } = this.#ready()
    await this.#endpoint(id)
    if (typeof eventId !== 'string' || !EVENT_ID.test(eventId)) throw invalid('eventId must be an evt_ id')
    const payload = await store.eventPayload(id, eventId)
    if (payload === null) throw new WebhookAdminError(`No delivery of event ${eventId} to endpoint ${id}`, 'not_found')
    return payload
  }

  /** Sends the event to the endpoint again (same `webhook-id`), now. */
  async redeliver(id: string, eventId: string, audit?: AuditFor): Promise<void> {
    const deps = this.#ready()
    await this.#endpoint(id)
    if (typeof eventId !== 'string' || !EVENT_ID.test(eventId)) throw invalid('eventId must be an evt_ id')
    if (!(await deps.store.redeliver(id, eventId, new Date(deps.clock.now()), audit?.(id)))) {
      throw new WebhookAdminError(`No event ${eventId} for the company of endpoint ${id} (unknown, or purged after the retention period)`, 'not_found')
    }
    deps.wake()
  }

  /** Sends again every delivery of the endpoint that failed, created at or after `since`. @returns how many. */
  async recover(id: string, since: Date, audit?: AuditFor): Promise<{ count: number }> {
    const deps = this.#ready()
    await this.#endpoint(id)
    if (!(since instanceof Date) || Number.isNaN(since.getTime())) throw invalid('since must be a valid Date')
    const count = await deps.store.recover(id, since, new Date(deps.clock.now()), audit?.(id))
    if (count > 0) deps.wake()
    return { count }
  }

  /**
   * Sends the endpoint the retained events of `[since, until)` that it subscribes to and never
   * got, or got only as a failed delivery (an endpoint disabled then, or created later).
   * Delivered and pending ones are left alone. At most `limit` (1 to 1,000; default 1,000) per
   * call: while `more` is true, call again with the same period. On a disabled endpoint the
   * deliveries wait, like recovered ones, until it is enabled.
   * @returns how many deliveries were made due, and whether more remain.
   * @example
   * let more = true
   * while (more) ({ more } = await app.workforceApi.webhooks.replay(id, { since, until }))
   */
  async replay(id: string, period: { since: Date; until: Date; limit?: number }, audit?: AuditFor): Promise<{ count: number; more: boolean }> {
    const deps = this.#ready()
    // A host's store written before the method existed (plain JavaScript escapes the type check).
    if (typeof deps.store.replay !== 'function') throw new WebhookAdminError('This webhook store has no replay(): update the adapter', 'unavailable')
    const endpoint = await this.#endpoint(id)
    const { since, until, limit = MAX_REPLAY_BATCH } = period ?? {}
    if (!(since instanceof Date) || Number.isNaN(since.getTime())) throw invalid('since must be a valid Date')
    if (!(until instanceof Date) || Number.isNaN(until.getTime())) throw invalid('until must be a valid Date')
    if (since.getTime() >= until.getTime()) throw invalid('since must be before until')
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_REPLAY_BATCH) throw invalid(`limit must be an integer from 1 to ${MAX_REPLAY_BATCH}`)
    // `*` is every subscribable type: a `webhook.test` event, sent to one endpoint, never is.
    const types = endpoint.events.includes(ALL_EVENTS) ? (this.#deps?.events ?? CONTRACT).eventTypes : endpoint.events
    const result = await deps.store.replay(id, { since, until, types, limit }, new Date(deps.clock.now()), audit?.(id))
    if (result.count > 0) deps.wake()
    return result
  }

  #ready(): ManagerDeps {
    if (this.#deps === undefined) throw new WebhookAdminError(this.#missing, 'unavailable')
    return this.#deps
  }

  async #endpoint(id: string): Promise<WebhookEndpointRecord> {
    return orNotFound(await this.#ready().store.getEndpoint(checkId(id)), id)
  }
}

function invalid(message: string): WebhookAdminError {
  return new WebhookAdminError(message, 'invalid_input')
}

function notFound(id: string): WebhookAdminError {
  return new WebhookAdminError(`No webhook endpoint with id ${id}`, 'not_found')
}

function orNotFound<T>(value: T | null, id: string): T {
  if (value === null) throw notFound(id)
  return value
}

function checkId(id: unknown): string {
  if (typeof id !== 'string' || !/^we_[a-z2-7]{24}$/.test(id)) throw invalid(`${JSON.stringify(id)} is not a webhook endpoint id (we_…)`)
  return id
}

function checkCompany(companyId: unknown): number {
  if (!Number.isSafeInteger(companyId) || (companyId as number) < 1) throw invalid('companyId must be a positive integer')
  return companyId as number
}

async function checkUrl(url: unknown, policy: DestinationPolicy): Promise<string> {
  if (typeof url !== 'string' || url.length === 0 || url.length > MAX_URL_LENGTH) throw invalid(`url must be a string of 1 to ${MAX_URL_LENGTH} characters`)
  try {
    return (await checkDestination(url, policy)).href
  } catch (error) {
    if (error instanceof WebhookDestinationError) throw invalid(`url ${error.message}`)
    throw error
  }
}

function checkEvents(events: unknown, catalogue: Pick<ResourceCatalogue, 'normaliseSubscriptions'>): string[] {
  if (!Array.isArray(events) || !events.every((event) => typeof event === 'string')) throw invalid('events must be an array of event types, or ["*"]')
  try {
    return catalogue.normaliseSubscriptions(events)
  } catch (error) {
    if (error instanceof EventSubscriptionError) throw invalid(error.message)
    throw error
  }
}

function checkDescription(description: unknown): string | null {
  if (description === null) return null
  if (typeof description !== 'string' || description.length > MAX_DESCRIPTION_LENGTH) throw invalid(`description must be a string of at most ${MAX_DESCRIPTION_LENGTH} characters, or null`)
  return description
}
