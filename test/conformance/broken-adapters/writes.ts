/**
 * Broken write adapters: the `WriteTransaction`, pending memberships, change events, the
 * idempotency store and the webhook outbox (docs/adapters.md, sections 2b and "Writes").
 */
import type { MemoryAdapter } from '../../../adapters/memory/index.js'
import type { IdempotencyBegin, StoredResponse } from '../../../src/ports/idempotency-store.js'
import type { ClaimedDelivery, WebhookDisabledReason, WebhookEndpointRecord } from '../../../src/ports/webhook-store.js'
import { WriteConflict, type ChangeEvent, type NewPerson, type TodoFields, type WriteTransaction } from '../../../src/ports/write-storage.js'
import type { InvitedPerson } from '../../../src/ports/dataset.js'
import { override, tick, withTransaction, type BrokenAdapter } from './wrap.js'

/** An adapter's own error class that only looks like ours: the plugin does not recognise it. */
class LookAlikeWriteConflict extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'WriteConflict'
  }
}

/** Runs `change` on every endpoint for the duration of `work` (synchronous), then puts them back. */
function withEndpointsAs<T>(adapter: MemoryAdapter, change: (endpoint: WebhookEndpointRecord) => Partial<WebhookEndpointRecord>, work: () => T): T {
  const saved = [...adapter.webhooks.endpoints.values()].map((endpoint) => ({ endpoint, before: { ...endpoint } }))
  for (const { endpoint } of saved) Object.assign(endpoint, change(endpoint))
  try {
    return work()
  } finally {
    for (const { endpoint, before } of saved) Object.assign(endpoint, before)
  }
}

/** The memory webhook store's fan-out, with the endpoints seen through `change` while it runs. */
function fanOutWith(adapter: MemoryAdapter, change: (endpoint: WebhookEndpointRecord, event: ChangeEvent) => Partial<WebhookEndpointRecord>): void {
  const store = adapter.webhooks
  const fanOut = store.fanOut.bind(store)
  store.fanOut = (event, undo) => withEndpointsAs(adapter, (endpoint) => change(endpoint, event), () => fanOut(event, undo))
}

/** JSON as Postgres prints a `jsonb` value: keys shortest first, a space after `:` and `,`. */
function jsonbText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jsonbText).join(', ')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => a.length - b.length || (a < b ? -1 : 1))
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}: ${jsonbText(member)}`).join(', ')}}`
  }
  return JSON.stringify(value)
}

const idempotencyRecords = (adapter: MemoryAdapter) => adapter.idempotency.records

export const BROKEN_WRITES: readonly BrokenAdapter[] = [
  // Ids
  {
    name: 'person-id-count-plus-one',
    area: 'writes',
    bug: 'new people get `count(*) + 1` as id, which collides with or falls below existing ids once ids have gaps',
    caughtBy: 'writes',
    break: (ports, adapter) => ({
      writes: withTransaction(ports, (tx) => ({
        async createPerson(person: NewPerson, now: Date) {
          const id = await tx.createPerson(person, now)
          const row = adapter.storage.data.people.find((candidate) => candidate.id === id)
          if (row !== undefined) row.id = adapter.storage.data.people.length
          return row?.id ?? id
        },
      })),
    }),
  },
  {
    name: 'todo-id-company-max-plus-one',
    area: 'writes',
    bug: "a new to-do's id is the company's largest to-do id + 1, though ids are unique across companies",
    caughtBy: 'writes',
    break: (ports, adapter) => ({
      writes: withTransaction(ports, (tx) => ({
        async insertTodo(companyId: number, fields: TodoFields, now: Date) {
          const record = await tx.insertTodo(companyId, fields, now)
          const todos = adapter.storage.data.todos
          const row = todos.find((candidate) => candidate.id === record.id)
          const others = todos.filter((candidate) => candidate.company_id === companyId && candidate !== row)
          if (row !== undefined) row.id = Math.max(0, ...others.map((candidate) => candidate.id)) + 1
          return { ...record, id: row?.id ?? record.id }
        },
      })),
    }),
  },

  // Uniqueness and WriteConflict
  {
    name: 'membership-upsert',
    area: 'writes',
    bug: '`addPendingMembership` upserts the company\'s user with that email (`ON CONFLICT DO UPDATE SET role_ids = …`) instead of throwing WriteConflict',
    caughtBy: 'writes',
    break: (ports, adapter) => ({
      writes: withTransaction(ports, (tx) => ({
        async addPendingMembership(companyId: number, roleIds: readonly number[], invited: InvitedPerson, now: Date) {
          try {
            return await tx.addPendingMembership(companyId, roleIds, invited, now)
          } catch (error) {
            if (!(error instanceof WriteConflict)) throw error
            const userId = (await tx.findMemberIdByEmail(companyId, invited.email.toLowerCase())) as number
            const membership = adapter.storage.data.memberships.find((candidate) => candidate.company_id === companyId && candidate.user_id === userId)
            if (membership !== undefined) Object.assign(membership, { role_ids: [...roleIds], updated_at: now })
            return userId
          }
        },
      })),
    }),
  },
  {
    name: 'email-unique-case-sensitive',
    area: 'writes',
    bug: 'the unique index is on `email`, not `lower(email)`: the same address in another case creates a second person',
    caughtBy: 'writes',
    break: (ports, adapter) => ({
      writes: withTransaction(ports, (tx) => ({
        async createPerson(person: NewPerson, now: Date) {
          const people = adapter.storage.data.people
          if (people.some((candidate) => candidate.email === person.email)) throw new WriteConflict(`${person.email} exists`)
          if ((await tx.findPersonIdByEmail(person.email.toLowerCase())) === null) return tx.createPerson(person, now)
          const id = Math.max(...people.map((candidate) => candidate.id)) + 1
          people.push({ id, ...person, active: true, password_hash: '', created_at: now, updated_at: now })
          return id
        },
      })),
    }),
  },
  {
    name: 'conflict-as-driver-error',
    area: 'writes',
    bug: "the unique-index violation escapes as the driver's error (`SQLITE_CONSTRAINT_UNIQUE`), not as WriteConflict: the API answers 500 instead of 409",
    caughtBy: 'writes',
    break: (ports) => {
      const driverError = (error: unknown) => {
        if (error instanceof WriteConflict) throw Object.assign(new Error('UNIQUE constraint failed: people.email_lower'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })
        throw error
      }
      return {
        writes: withTransaction(ports, (tx) => ({
          createPerson: (person: NewPerson, now: Date) => tx.createPerson(person, now).catch(driverError),
          addPendingMembership: (companyId: number, roleIds: readonly number[], invited: InvitedPerson, now: Date) => tx.addPendingMembership(companyId, roleIds, invited, now).catch(driverError),
        })),
      }
    },
  },
  {
    name: 'conflict-look-alike-class',
    area: 'writes',
    bug: "the adapter declares its own `class WriteConflict extends Error` instead of importing ours: the plugin does not recognise it and answers 500",
    caughtBy: 'writes',
    break: (ports) => {
      const lookAlike = (error: unknown) => {
        if (error instanceof WriteConflict) throw new LookAlikeWriteConflict(error.message)
        throw error
      }
      return {
        writes: withTransaction(ports, (tx) => ({
          createPerson: (person: NewPerson, now: Date) => tx.createPerson(person, now).catch(lookAlike),
          addPendingMembership: (companyId: number, roleIds: readonly number[], invited: InvitedPerson, now: Date) => tx.addPendingMembership(companyId, roleIds, invited, now).catch(lookAlike),
        })),
      }
    },
  },

  // Scope, atomicity, dates
  {
    name: 'update-todo-any-company',
    area: 'tenant isolation',
    bug: '`updateTodo` runs `UPDATE todos … WHERE id = ?` without the company: one company edits another\'s to-do',
    caughtBy: 'writes',
    break: (ports, adapter) => ({
      writes: withTransaction(ports, (tx) => ({
        updateTodo(companyId: number, id: number, changes: Partial<TodoFields>, now: Date) {
          const owner = adapter.storage.data.todos.find((todo) => todo.id === id)?.company_id ?? companyId
          return tx.updateTodo(owner, id, changes, now)
        },
      })),
    }),
  },
  {
    name: 'autocommit-statements',
    area: 'writes',
    bug: 'the transaction handle is not passed down: each statement runs on the pool and commits at once, so a failed write leaves the earlier ones behind',
    caughtBy: 'writes',
    break: (ports) => {
      const base = ports.writes
      return {
        writes: override(base, {
          transaction: <T>(work: (tx: WriteTransaction) => Promise<T>) => {
            const autocommit = new Proxy({} as WriteTransaction, {
              get: (_, key) =>
                (...args: unknown[]) =>
                  base.transaction((tx) => (tx[key as keyof WriteTransaction] as (...values: unknown[]) => Promise<unknown>)(...args)),
            })
            return work(autocommit)
          },
        }),
      }
    },
  },
  {
    name: 'transaction-swallows-errors',
    area: 'writes',
    bug: '`transaction` rolls back but resolves `undefined` instead of rethrowing what `work` threw',
    caughtBy: 'writes',
    break: (ports) => {
      const base = ports.writes
      return { writes: override(base, { transaction: <T>(work: (tx: WriteTransaction) => Promise<T>) => base.transaction(work).catch(() => undefined) }) }
    },
  },
  {
    name: 'update-todo-keeps-updated-at',
    area: 'writes',
    bug: '`updateTodo` writes the changes but leaves `updated_at` (a trigger that was never installed)',
    caughtBy: 'writes',
    break: (ports) => ({
      writes: withTransaction(ports, (tx) => ({
        async updateTodo(companyId: number, id: number, changes: Partial<TodoFields>, now: Date) {
          const current = await tx.getTodoForUpdate(companyId, id)
          return tx.updateTodo(companyId, id, changes, current?.updated_at ?? now)
        },
      })),
    }),
  },

  // Pending memberships
  {
    name: 'set-user-active-bumps-pending',
    area: 'writes',
    bug: "`setUserActive` bumps `updated_at` of every membership, pending ones included: the inviting company sees another company's offboarding",
    caughtBy: 'pending memberships',
    break: (ports, adapter) => ({
      writes: withTransaction(ports, (tx) => ({
        async setUserActive(companyId: number, userId: number, active: boolean, now: Date) {
          await tx.setUserActive(companyId, userId, active, now)
          // Bumps every user with the person's email, a pending one that names it included.
          const email = (await tx.getUser(companyId, userId))?.email.toLowerCase()
          for (const membership of adapter.storage.data.memberships) {
            if (membership.company_id === companyId && membership.user_id === userId) continue
            const shown = membership.invited?.email ?? adapter.storage.data.people.find((person) => person.id === membership.person_id)?.email
            if (shown?.toLowerCase() === email) membership.updated_at = now
          }
        },
      })),
    }),
  },
  {
    name: 'remove-pending-deletes-accepted',
    area: 'writes',
    bug: "`removePendingMembership` deletes the membership whatever its state (`DELETE … WHERE company_id = ? AND user_id = ?`)",
    caughtBy: 'pending memberships',
    break: (ports, adapter) => ({
      writes: withTransaction(ports, (tx) => ({
        async removePendingMembership(companyId: number, userId: number) {
          if (await tx.removePendingMembership(companyId, userId)) return true
          const rows = adapter.storage.data.memberships
          const index = rows.findIndex((membership) => membership.company_id === companyId && membership.user_id === userId)
          if (index < 0) return false
          rows.splice(index, 1)
          return true
        },
      })),
    }),
  },
  {
    name: 'accept-resets-created-at',
    area: 'writes',
    bug: '`acceptMembership` sets `created_at = now` as well as `updated_at`',
    caughtBy: 'pending memberships',
    break: (ports, adapter) => ({
      writes: withTransaction(ports, (tx) => ({
        async acceptMembership(companyId: number, userId: number, personId: number, now: Date) {
          const accepted = await tx.acceptMembership(companyId, userId, personId, now)
          const membership = adapter.storage.data.memberships.find((candidate) => candidate.company_id === companyId && candidate.user_id === userId)
          if (accepted && membership !== undefined) membership.created_at = now
          return accepted
        },
      })),
    }),
  },

  // Change events
  {
    name: 'event-outside-transaction',
    area: 'events',
    bug: 'events are written on a connection of their own, outside the transaction: a rolled-back change keeps its event',
    caughtBy: 'change events',
    break: (ports) => {
      const written: ChangeEvent[] = []
      return {
        writes: withTransaction(ports, (tx) => ({
          async recordEvent(event: ChangeEvent) {
            written.push(structuredClone(event))
            await tx.recordEvent(event)
          },
        })),
        readEvents: async () => structuredClone(written),
      }
    },
  },
  {
    name: 'event-payload-reserialized',
    area: 'events',
    bug: 'the payload is kept in a `jsonb` column and read back re-serialized: the delivered bytes differ from the rendered ones',
    caughtBy: 'change events',
    break: (ports) => ({
      readEvents: async () => (await ports.readEvents()).map((event) => ({ ...event, payload: jsonbText(JSON.parse(event.payload)) })),
    }),
  },

  // Idempotency store
  {
    name: 'begin-check-then-insert',
    area: 'idempotency',
    bug: '`begin` reads the slot, then inserts in a second statement without a lock or unique index: racing requests both start',
    caughtBy: 'idempotency store',
    break: ({ idempotency }, adapter) => ({
      idempotency: override(idempotency, {
        async begin(request: IdempotencyBegin) {
          const existed = idempotencyRecords(adapter).has(request.slot)
          await tick()
          if (!existed) idempotencyRecords(adapter).delete(request.slot)
          return idempotency.begin(request)
        },
      }),
    }),
  },
  {
    name: 'lease-held-one-ms-too-long',
    area: 'idempotency',
    bug: '`lease_until >= now` where it should be `>`: a lease still blocks at its very end',
    caughtBy: 'idempotency store',
    break: ({ idempotency }, adapter) => ({
      idempotency: override(idempotency, {
        async begin(request: IdempotencyBegin) {
          const record = idempotencyRecords(adapter).get(request.slot)
          if (
            record !== undefined &&
            record.state === 'in_flight' &&
            record.fingerprint === request.fingerprint &&
            record.created_at.getTime() >= request.expiredBefore.getTime() &&
            record.lease_until.getTime() === request.now.getTime()
          ) {
            return { state: 'in_flight' as const }
          }
          return idempotency.begin(request)
        },
      }),
    }),
  },
  {
    name: 'expiry-inclusive',
    area: 'idempotency',
    bug: '`created_at <= expiredBefore` counts a record created exactly at the cutoff as expired',
    caughtBy: 'idempotency store',
    break: ({ idempotency }, adapter) => ({
      idempotency: override(idempotency, {
        begin(request: IdempotencyBegin) {
          const record = idempotencyRecords(adapter).get(request.slot)
          if (record !== undefined && record.created_at.getTime() === request.expiredBefore.getTime()) idempotencyRecords(adapter).delete(request.slot)
          return idempotency.begin(request)
        },
      }),
    }),
  },
  {
    name: 'complete-ignores-token',
    area: 'idempotency',
    bug: '`complete` updates the slot without `AND token = ?`: an attempt whose lease was taken over still completes',
    caughtBy: 'idempotency store',
    break: ({ idempotency }, adapter) => ({
      idempotency: override(idempotency, {
        complete(slot: string, token: string, response: StoredResponse, now: Date) {
          const record = idempotencyRecords(adapter).get(slot)
          if (record !== undefined) record.token = token
          return idempotency.complete(slot, token, response, now)
        },
      }),
    }),
  },
  {
    name: 'renew-ignores-token',
    area: 'idempotency',
    bug: '`renew` updates the lease by slot alone: any attempt keeps any slot alive',
    caughtBy: 'idempotency store',
    break: ({ idempotency }, adapter) => ({
      idempotency: override(idempotency, {
        renew(slot: string, token: string, leaseUntil: Date) {
          const record = idempotencyRecords(adapter).get(slot)
          if (record !== undefined && record.state === 'in_flight') record.token = token
          return idempotency.renew(slot, token, leaseUntil)
        },
      }),
    }),
  },
  {
    name: 'renew-not-stored',
    area: 'idempotency',
    bug: '`renew` answers true but writes the new lease to a cache that `begin` never reads',
    caughtBy: 'idempotency store',
    break: ({ idempotency }, adapter) => ({
      idempotency: override(idempotency, {
        async renew(slot: string, token: string) {
          const record = idempotencyRecords(adapter).get(slot)
          return record !== undefined && record.token === token && record.state === 'in_flight'
        },
      }),
    }),
  },
  {
    name: 'purge-ignores-limit',
    area: 'idempotency',
    bug: '`purgeExpired` deletes every expired record at once, ignoring the batch limit',
    caughtBy: 'idempotency store',
    break: ({ idempotency }) => ({
      idempotency: override(idempotency, { purgeExpired: (before: Date) => idempotency.purgeExpired(before, Number.MAX_SAFE_INTEGER) }),
    }),
  },
  {
    name: 'replay-body-reserialized',
    area: 'idempotency',
    bug: 'the stored body goes through `JSON.parse`/`JSON.stringify` (a `jsonb` column): a replay is not byte for byte',
    caughtBy: 'idempotency store',
    break: ({ idempotency }) => ({
      idempotency: override(idempotency, {
        async begin(request: IdempotencyBegin) {
          const result = await idempotency.begin(request)
          if (result.state !== 'replay') return result
          let body = result.response.body
          try {
            body = JSON.stringify(JSON.parse(body))
          } catch {
            // not JSON: kept as is
          }
          return { state: 'replay' as const, response: { ...result.response, body } }
        },
      }),
    }),
  },
  {
    name: 'fingerprint-ignored',
    area: 'idempotency',
    bug: 'the fingerprint is stored but never compared: a different request on the same key replays the first response',
    caughtBy: 'idempotency store',
    break: ({ idempotency }, adapter) => ({
      idempotency: override(idempotency, {
        begin(request: IdempotencyBegin) {
          const record = idempotencyRecords(adapter).get(request.slot)
          if (record !== undefined) record.fingerprint = request.fingerprint
          return idempotency.begin(request)
        },
      }),
    }),
  },
  {
    name: 'release-frees-any-slot',
    area: 'idempotency',
    bug: '`release` deletes the slot whatever its token or state: a completed response is forgotten',
    caughtBy: 'idempotency store',
    break: ({ idempotency }, adapter) => ({
      idempotency: override(idempotency, {
        async release(slot: string) {
          idempotencyRecords(adapter).delete(slot)
        },
      }),
    }),
  },

  // Webhook outbox and deliveries
  {
    name: 'fan-out-ignores-subscription',
    area: 'webhooks outbox',
    bug: 'every enabled endpoint of the company gets a delivery, whatever event types it subscribed to',
    caughtBy: 'webhook endpoints and outbox',
    break: (_, adapter) => {
      fanOutWith(adapter, () => ({ events: ['*'] }))
      return {}
    },
  },
  {
    name: 'fan-out-to-disabled-endpoints',
    area: 'webhooks outbox',
    bug: 'the fan-out query forgets `status = enabled`: disabled endpoints pile up deliveries',
    caughtBy: 'webhook endpoints and outbox',
    break: (_, adapter) => {
      fanOutWith(adapter, () => ({ status: 'enabled' }))
      return {}
    },
  },
  {
    name: 'fan-out-across-companies',
    area: 'webhooks outbox',
    bug: "the fan-out joins endpoints without the event's company: every company's endpoints receive it",
    caughtBy: 'webhook endpoints and outbox',
    break: (_, adapter) => {
      fanOutWith(adapter, (_endpoint, event) => ({ company_id: event.company_id }))
      return {}
    },
  },
  {
    name: 'endpoints-newest-first',
    area: 'webhooks outbox',
    bug: '`listEndpoints` orders by `created_at DESC`',
    caughtBy: 'webhook endpoints and outbox',
    break: ({ webhooks }) => ({ webhooks: override(webhooks, { listEndpoints: async (companyId: number) => (await webhooks.listEndpoints(companyId)).reverse() }) }),
  },
  {
    name: 'redeliver-any-company',
    area: 'webhooks outbox',
    bug: "`redeliver` looks the event up by id alone: a company can have another company's event delivered to its endpoint",
    caughtBy: 'webhook endpoints and outbox',
    break: ({ webhooks }, adapter) => ({
      webhooks: override(webhooks, {
        async redeliver(endpointId: string, eventId: string, now: Date) {
          const event = adapter.webhooks.events.get(eventId)
          const endpoint = adapter.webhooks.endpoints.get(endpointId)
          if (event === undefined || endpoint === undefined) return webhooks.redeliver(endpointId, eventId, now)
          const company = event.company_id
          event.company_id = endpoint.company_id
          try {
            return await webhooks.redeliver(endpointId, eventId, now)
          } finally {
            event.company_id = company
          }
        },
      }),
    }),
  },
  {
    name: 'claim-ignores-lease',
    area: 'webhooks outbox',
    bug: '`claimDue` does not move `next_attempt_at` to the lease end: a claimed delivery is handed out again at once',
    caughtBy: 'webhook deliveries',
    break: ({ webhooks }, adapter) => ({
      webhooks: override(webhooks, {
        async claimDue(now: Date, leaseUntil: Date, limit: number) {
          const due = new Map(adapter.webhooks.deliveries.map((row) => [row.id, row.next_attempt_at]))
          const claims = await webhooks.claimDue(now, leaseUntil, limit)
          for (const claim of claims) {
            const row = adapter.webhooks.deliveries.find((candidate) => candidate.id === claim.delivery_id)
            if (row !== undefined) row.next_attempt_at = due.get(row.id) ?? now
          }
          return claims
        },
      }),
    }),
  },
  {
    name: 'claim-newest-first',
    area: 'webhooks outbox',
    bug: '`claimDue` orders by `next_attempt_at DESC`: under load the oldest deliveries starve',
    caughtBy: 'webhook deliveries',
    break: ({ webhooks }, adapter) => ({
      webhooks: override(webhooks, {
        async claimDue(now: Date, leaseUntil: Date, limit: number) {
          const before = new Map(adapter.webhooks.deliveries.map((row) => [row.id, { ...row }]))
          const claims = await webhooks.claimDue(now, leaseUntil, Number.MAX_SAFE_INTEGER)
          const dueAt = (claim: ClaimedDelivery) => (before.get(claim.delivery_id)?.next_attempt_at as Date).getTime()
          const sorted = [...claims].sort((a, b) => dueAt(b) - dueAt(a) || b.delivery_id - a.delivery_id)
          for (const claim of sorted.slice(limit)) {
            const row = adapter.webhooks.deliveries.find((candidate) => candidate.id === claim.delivery_id)
            const saved = before.get(claim.delivery_id)
            if (row !== undefined && saved !== undefined) Object.assign(row, saved)
          }
          return sorted.slice(0, limit)
        },
      }),
    }),
  },
  {
    name: 'disable-keeps-pending',
    area: 'webhooks outbox',
    bug: "`disableEndpoint` flips the endpoint but leaves its pending deliveries pending",
    caughtBy: 'webhook deliveries',
    break: ({ webhooks }, adapter) => ({
      webhooks: override(webhooks, {
        async disableEndpoint(id: string, reason: WebhookDisabledReason, now: Date) {
          const pending = adapter.webhooks.deliveries.filter((row) => row.endpoint_id === id && row.status === 'pending').map((row) => ({ row, before: { ...row } }))
          const disabled = await webhooks.disableEndpoint(id, reason, now)
          for (const { row, before } of pending) Object.assign(row, before)
          return disabled
        },
      }),
    }),
  },
  {
    name: 'stale-claim-finishes',
    area: 'webhooks outbox',
    bug: "`finishAttempt` does not check the lease: a dispatcher whose claim ran out still records its attempt",
    caughtBy: 'webhook deliveries',
    break: ({ webhooks }, adapter) => ({
      webhooks: override(webhooks, {
        finishAttempt(claim: ClaimedDelivery, ...rest: unknown[]) {
          const row = adapter.webhooks.deliveries.find((candidate) => candidate.id === claim.delivery_id)
          if (row !== undefined && row.status === 'pending') row.lease = claim.lease
          return (webhooks.finishAttempt as (...args: unknown[]) => Promise<unknown>)(claim, ...rest)
        },
      }),
    }),
  },
]
