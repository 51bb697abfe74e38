import { CONTRACT, CONTRACT_RESOURCES } from '../api/index.js'
import type { FieldKinds } from '../api/resource.js'
import type { ResourceReader, Storage } from '../ports/storage.js'

/** Each list resource of the `Storage` port: every member but `company`. */
export type ListResource = Exclude<keyof Storage, 'company'>
/** The record type of a list resource, as its reader returns it. */
export type RecordOf<N extends ListResource> = Storage[N] extends ResourceReader<infer R, unknown> ? R : never
/** The filter type of a list resource, as its reader takes it. */
export type FilterOf<N extends ListResource> = Storage[N] extends ResourceReader<unknown, infer F> ? F : never

/** Every resource of the contract with a list reader, in declaration order (`CONTRACT_RESOURCES`). */
export const LIST_RESOURCES = CONTRACT_RESOURCES.flatMap((resource) => (resource.list === undefined ? [] : [resource.name])) as readonly ListResource[]

/** A reader typed only as far as generic checks need: ids, and a filter object. */
export type AnyReader = ResourceReader<{ id: number } & Record<string, unknown>, object>

export function readerOf(storage: Storage, resource: ListResource): AnyReader {
  return storage[resource] as unknown as AnyReader
}

/** What the declaration of `name` tells the conformance suite (`conformance`). */
function describedBy(name: ListResource | 'company') {
  const conformance = CONTRACT.resource(name)?.conformance
  if (conformance === undefined) throw new TypeError(`the declaration of ${name} has no conformance description`)
  return conformance
}

/**
 * Exactly the keys of each record type: a returned record has these and no other
 * (a storage-only column such as `salary_cents` or `company_id` must never come back).
 */
export const RECORD_KEYS = Object.fromEntries(
  [...LIST_RESOURCES, 'company' as const].map((name) => [name, describedBy(name).recordKeys]),
) as Readonly<Record<ListResource | 'company', readonly string[]>>

/**
 * Every member of each resource's filter. The plugin builds filters with a member for each
 * parameter, `undefined` when absent, so adapters must treat `undefined` as "no filter".
 */
export const FILTER_KEYS = Object.fromEntries(LIST_RESOURCES.map((name) => [name, describedBy(name).filterKeys ?? []])) as Readonly<
  Record<ListResource, readonly string[]>
>

/** What each field of each resource must come back as (`FieldKinds`). */
export const FIELD_KINDS = Object.fromEntries(
  LIST_RESOURCES.map((name) => {
    const kinds = describedBy(name).fieldKinds
    if (kinds === undefined) throw new TypeError(`the declaration of ${name} has no field kinds`)
    return [name, kinds]
  }),
) as Readonly<Record<ListResource, FieldKinds>>

/** Every resource whose filter has `updatedSince` (all but roles). */
export const UPDATED_SINCE_RESOURCES = LIST_RESOURCES.filter((name) => FILTER_KEYS[name].includes('updatedSince'))

/** Every resource filtered by whole days on its own `date` field (`dateFrom`/`dateTo`, spec 4.3.3). */
export const DAY_RESOURCES = LIST_RESOURCES.filter((name) => FILTER_KEYS[name].includes('dateFrom') && FIELD_KINDS[name].days.includes('date'))

export type { FieldKinds }
