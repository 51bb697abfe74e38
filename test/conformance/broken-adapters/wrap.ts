/**
 * How a broken adapter is made: the in-memory reference adapter, with one port method (or one
 * reader) replaced by a version that has one realistic bug. Every other call goes to the
 * reference unchanged, so the suite's failure is about that bug alone.
 */
import { createMemoryAdapter, type MemoryAdapter } from '../../../adapters/memory/index.js'
import type { ConformanceSubject } from '../../../src/conformance/subject.js'
import { FIELD_KINDS, LIST_RESOURCES, type ListResource } from '../../../src/conformance/resources.js'
import type { ListResult, PageWindow, Storage } from '../../../src/ports/storage.js'
import type { WriteTransaction } from '../../../src/ports/write-storage.js'

/** The ports a broken adapter may replace, and the events hook. */
export type Ports = Required<Pick<ConformanceSubject, 'storage' | 'keyStore' | 'modules' | 'writes' | 'idempotency' | 'webhooks' | 'audit' | 'usage' | 'readEvents'>>

/** The suite's group titles (checked by `runConformance`, which refuses an unknown one). */
export type GroupTitle =
  | 'ordering and pagination'
  | 'lookup by id'
  | 'equality and boolean filters'
  | 'updatedSince'
  | 'day windows on day fields'
  | 'shift windows (instant bounds)'
  | 'to-do due windows (all-day days and timed instants)'
  | 'value fidelity'
  | 'record shape (no private or extra fields)'
  | 'tenant isolation'
  | 'key store'
  | 'module registry'
  | 'writes'
  | 'pending memberships'
  | 'change events'
  | 'idempotency store'
  | 'webhook endpoints and outbox'
  | 'webhook deliveries'
  | 'webhook test events, payloads and delivery filters'
  | 'webhook replay of a period'
  | 'audit trail'
  | 'key usage'
  | 'HTTP responses equal the reference adapter'

export interface BrokenAdapter {
  /** Short, unique: `total-is-page-length`. */
  name: string
  area:
    | 'paging'
    | 'totals'
    | 'ordering'
    | 'filters'
    | 'time zones'
    | 'money'
    | 'values'
    | 'tenant isolation'
    | 'keys'
    | 'modules'
    | 'writes'
    | 'idempotency'
    | 'events'
    | 'webhooks outbox'
    | 'audit'
    | 'usage'
  /** The bug, as it would be written in a bug report. */
  bug: string
  /** The group that must catch it. */
  caughtBy: GroupTitle
  /** The ports to replace, given the reference adapter's. */
  break(ports: Ports, adapter: MemoryAdapter): Partial<Ports>
}

/**
 * `target` with some members replaced. Other members are the target's own, with methods bound
 * to it (the memory classes use private fields, which a plain prototype copy cannot reach).
 */
export function override<T extends object>(target: T, changes: Partial<Record<keyof T, unknown>>): T {
  return new Proxy(target, {
    get(object, key) {
      if (Object.hasOwn(changes, key)) return (changes as Record<PropertyKey, unknown>)[key]
      const value: unknown = Reflect.get(object, key, object)
      return typeof value === 'function' ? value.bind(object) : value
    },
  })
}

export type AnyRecord = { id: number } & Record<string, unknown>
export type AnyFilter = Record<string, unknown>
export interface AnyReader {
  list(companyId: number, filter: AnyFilter, window: PageWindow): Promise<ListResult<AnyRecord>>
  get(companyId: number, id: number): Promise<AnyRecord | null>
}

export function readerOf(storage: Storage, resource: ListResource): AnyReader {
  return storage[resource] as unknown as AnyReader
}

/** `storage` with the readers of `resources` replaced by `patch(original reader, resource)`. */
export function withReaders(storage: Storage, resources: readonly ListResource[], patch: (base: AnyReader, resource: ListResource) => Partial<AnyReader>): Storage {
  const changes: Partial<Record<keyof Storage, unknown>> = {}
  for (const resource of resources) {
    const base = readerOf(storage, resource)
    changes[resource] = override(base, patch(base, resource))
  }
  return override(storage, changes)
}

/** Every row of the company matching `filter`, in id order (the reference's whole answer). */
export async function everything(base: AnyReader, companyId: number, filter: AnyFilter): Promise<AnyRecord[]> {
  return (await base.list(companyId, filter, { limit: 100, offset: 0 })).rows
}

/** A reader that gets the whole matching list from the reference, reorders or filters it, then pages it. */
export function reshaped(reshape: (rows: AnyRecord[], companyId: number, filter: AnyFilter) => AnyRecord[] | Promise<AnyRecord[]>): (base: AnyReader) => Partial<AnyReader> {
  return (base) => ({
    async list(companyId, filter, window) {
      const rows = await reshape(await everything(base, companyId, filter), companyId, filter)
      return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
    },
  })
}

/** A reader whose records (listed and fetched) pass through `change`. */
export function mapped(change: (record: AnyRecord, resource: ListResource) => AnyRecord): (base: AnyReader, resource: ListResource) => Partial<AnyReader> {
  return (base, resource) => ({
    async list(companyId, filter, window) {
      const result = await base.list(companyId, filter, window)
      return { ...result, rows: result.rows.map((row) => change(row, resource)) }
    },
    async get(companyId, id) {
      const record = await base.get(companyId, id)
      return record === null ? null : change(record, resource)
    },
  })
}

/** Every reader's records with each field of a kind (`days`, `instants`…) passed through `change`. */
export function mapFields(storage: Storage, kind: keyof (typeof FIELD_KINDS)['users'], change: (value: unknown) => unknown): Storage {
  return withReaders(
    storage,
    LIST_RESOURCES,
    mapped((record, resource) => {
      const copy: AnyRecord = { ...record }
      for (const field of FIELD_KINDS[resource][kind]) copy[field] = change(copy[field])
      return copy
    }),
  )
}

/** `writes` whose transactions hand `work` a transaction with some operations replaced. */
export function withTransaction(ports: Ports, patch: (tx: WriteTransaction) => Partial<Record<keyof WriteTransaction, unknown>>): Ports['writes'] {
  const base = ports.writes
  return override(base, {
    transaction: <T>(work: (tx: WriteTransaction) => Promise<T>) => base.transaction((tx) => work(override(tx, patch(tx)))),
  })
}

/** A fresh reference adapter as a conformance subject, with the broken adapter's ports in place. */
export function brokenSubject(broken: Pick<BrokenAdapter, 'break'>): ConformanceSubject {
  const adapter = createMemoryAdapter()
  const ports: Ports = {
    storage: adapter.storage,
    keyStore: adapter.keyStore,
    modules: adapter.modules,
    writes: adapter.writes,
    idempotency: adapter.idempotency,
    webhooks: adapter.webhooks,
    audit: adapter.audit,
    usage: adapter.usage,
    readEvents: async () => structuredClone(adapter.events),
  }
  return {
    ...ports,
    ...broken.break(ports, adapter),
    loadDataset: (dataset) => adapter.loadDataset(dataset),
    close: () => adapter.close(),
  }
}

/** Lets other pending work run, as a database round trip would. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
