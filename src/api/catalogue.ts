import type { TSchema } from '@sinclair/typebox'
import fastJsonStringify from 'fast-json-stringify'
import { OPTION_ERROR_CODES, WorkforceOptionError } from '../errors.js'
import { newEventId } from '../events/event-id.js'
import { changedFields } from '../events/previous-attributes.js'
import { ALL_EVENTS, EventSubscriptionError } from '../events/event-types.js'
import type { ChangeEvent } from '../ports/write-storage.js'
import type { Storage } from '../ports/storage.js'
import { PageQuery } from './pagination.js'
import { getOperationId, listOperationId } from './operation-ids.js'
import { readRoutes } from './read-routes.js'
import { EVENT_ACTIONS, type AnyResourceDeclaration, type OperationDocs } from './resource.js'
import type { ApiContext, RouteSpec } from './route-spec.js'
import { timestamp } from './wire.js'

/**
 * A declaration the catalogue refuses, as the option error it is: `option` names the field
 * (`resources[0] (teams).scope`), the message says what is wrong. Thrown at registration, so
 * `ready()` fails.
 */
export class ResourceDeclarationError extends WorkforceOptionError {
  constructor(where: string, problem: string) {
    super(OPTION_ERROR_CODES.invalid, where, problem)
  }
}

/** Thrown for an event that cannot be rendered: an unknown type, or a record without an id. */
export class EventInputError extends TypeError {
  constructor(message: string) {
    super(message)
    this.name = 'EventInputError'
  }
}

/** An event as a producer gives it: the type, the company, and the record as stored after the change (before it, for `*.deleted`). */
export interface AnyEventInput {
  type: string
  companyId: number
  record: unknown
  /**
   * For an `*.updated` event only: the same record as stored before the change. The payload
   * then carries `previous_attributes`, the fields whose rendering changed with their values
   * before. Left out (or `null`), the payload has no `previous_attributes`.
   */
  previous?: unknown
}

/** A resource's top-level field names, in schema order, and the serializer of a subset of them. */
interface ChangeSerializer {
  fields: readonly string[]
  serialize: (value: unknown) => string
}

/** The names a declaration may use: lower case, digits and `_`, starting with a letter. */
const NAME = /^[a-z][a-z0-9_]{0,39}$/
const COMPONENT = /^[A-Z][A-Za-z0-9]{0,63}$/
/** Component names the document uses for itself. */
const RESERVED_COMPONENTS = new Set(['ErrorEnvelope', 'Pagination'])
/** Query parameters every list has (`page`, `per_page`, `starting_after`): a host filter may not take their names. */
const PAGE_PARAMETERS = new Set(Object.keys(PageQuery))

/**
 * The resources one plugin instance serves — the contract's nine and any a host declared — and
 * everything derived from them: the route table, the scopes and their modules, the event
 * catalogue and its renderers, the reference document's components and prose. Built once at
 * registration; a malformed or colliding declaration throws `ResourceDeclarationError` there.
 */
export class ResourceCatalogue {
  /** Every declaration, the contract's first, in the order of the list each came from. */
  readonly resources: readonly AnyResourceDeclaration[]
  /** Every scope: by resource, its read scope and then its write scope. */
  readonly scopes: readonly string[]
  /** Every platform module a scope belongs to, in the order of `scopes`. */
  readonly modules: readonly string[]
  /** Every event type, in catalogue order: positioned ones first (spec 6), then the rest in declaration order. */
  readonly eventTypes: readonly string[]
  readonly #moduleOfScope = new Map<string, string>()
  readonly #byName = new Map<string, AnyResourceDeclaration>()
  readonly #eventTypes: ReadonlySet<string>
  readonly #hosts: ReadonlySet<AnyResourceDeclaration>
  readonly #serializers = new Map<string, (value: unknown) => string>()
  readonly #changeSerializers = new Map<string, ChangeSerializer>()

  /**
   * @param contract the package's own declarations, trusted
   * @param hosts a host's declarations (the plugin's `resources` option), checked one by one
   */
  constructor(contract: readonly AnyResourceDeclaration[], hosts: readonly unknown[] = []) {
    hosts.forEach((declaration, index) => checkShape(declaration, `resources[${index}]`))
    const all = [...contract, ...(hosts as AnyResourceDeclaration[])]
    this.resources = all
    this.#hosts = new Set(hosts as AnyResourceDeclaration[])
    const components = new Set<string>()
    const scopes: string[] = []
    all.forEach((declaration) => {
      const where = this.whereOf(declaration)
      if (this.#byName.has(declaration.name)) throw new ResourceDeclarationError(`${where}.name`, `"${declaration.name}" is already a resource of this API`)
      if (components.has(declaration.component)) throw new ResourceDeclarationError(`${where}.component`, `"${declaration.component}" is already a component of this API`)
      this.#byName.set(declaration.name, declaration)
      components.add(declaration.component)
      for (const scope of [declaration.scope, declaration.write?.scope]) {
        if (scope === undefined) continue
        scopes.push(scope)
        this.#moduleOfScope.set(scope, declaration.module)
      }
    })
    this.scopes = scopes
    this.modules = [...new Set(scopes.map((scope) => this.#moduleOfScope.get(scope) as string))]
    const withEvents = all.filter((declaration) => declaration.events !== undefined)
    const positioned = withEvents.filter((d) => d.events?.position !== undefined).sort((a, b) => (a.events?.position as number) - (b.events?.position as number))
    this.eventTypes = [...positioned, ...withEvents.filter((d) => d.events?.position === undefined)].flatMap((declaration) =>
      (declaration.events?.actions ?? []).map((action) => `${declaration.name}.${action}`),
    )
    this.#eventTypes = new Set(this.eventTypes)
  }

  /** How messages name a declaration: `resource users` for ours, `resources[0] (teams)` for a host's. */
  whereOf(declaration: AnyResourceDeclaration): string {
    if (!this.#hosts.has(declaration)) return `resource ${declaration.name}`
    return `resources[${[...this.#hosts].indexOf(declaration)}] (${declaration.name})`
  }

  /** Whether a host declared it (not the contract). */
  isHostResource(declaration: AnyResourceDeclaration): boolean {
    return this.#hosts.has(declaration)
  }

  resource(name: string): AnyResourceDeclaration | undefined {
    return this.#byName.get(name)
  }

  /** The platform module of `scope`; throws for a scope not in the catalogue. */
  moduleOf(scope: string): string {
    const module = this.#moduleOfScope.get(scope)
    if (module === undefined) throw new ResourceDeclarationError(`scope "${scope}"`, 'is not a scope of any resource of this API')
    return module
  }

  isEventType(value: string): boolean {
    return this.#eventTypes.has(value)
  }

  /**
   * An endpoint's subscriptions, validated and normalised: `*` alone stands for everything;
   * otherwise known types, de-duplicated, in catalogue order. Throws `EventSubscriptionError`.
   */
  normaliseSubscriptions(events: readonly string[]): string[] {
    if (events.length === 0) throw new EventSubscriptionError([], this.eventTypes)
    if (events.includes(ALL_EVENTS)) return [ALL_EVENTS]
    const unknown = events.filter((event) => !this.isEventType(event))
    if (unknown.length > 0) throw new EventSubscriptionError([...new Set(unknown)], this.eventTypes)
    return this.eventTypes.filter((type) => events.includes(type))
  }

  /**
   * Every route, in declaration order: each resource's list and by-id reads (or its own
   * routes), and its write routes when `context.writes` is set. An operation id or a path
   * declared twice, or a route whose scope is not its resource's, throws.
   */
  routes(context: ApiContext): RouteSpec[] {
    const routes = this.resources.flatMap((declaration) => {
      const own = [
        ...(declaration.list === undefined ? [] : readRoutes(declaration, declaration.list, context)),
        ...(declaration.routes?.(context) ?? []),
        ...(declaration.write === undefined || context.writes === undefined ? [] : declaration.write.routes(context.writes)),
      ]
      for (const route of own) {
        if (route.scope !== declaration.scope && route.scope !== declaration.write?.scope) {
          throw new ResourceDeclarationError(`${this.whereOf(declaration)}: route ${route.operationId}`, `needs "${route.scope}", which is not a scope of ${declaration.name}`)
        }
      }
      return own
    })
    const seen = new Set<string>()
    for (const route of routes) {
      for (const key of [`operation id ${route.operationId}`, `${route.method} ${route.url}`]) {
        if (seen.has(key)) throw new ResourceDeclarationError(`route ${route.operationId}`, `repeats the ${key}`)
        seen.add(key)
      }
    }
    return routes
  }

  /**
   * Checks that `storage` (and each host reader) serves what the declarations read; returns the
   * first problem as `[where, problem]`, or `undefined`.
   */
  storageProblem(storage: Storage): [string, string] | undefined {
    for (const declaration of this.resources) {
      const host = this.isHostResource(declaration)
      for (const member of Object.keys(declaration.storage ?? {})) {
        if (typeof (storage as unknown as Record<string, unknown>)[member] !== 'function') return [`storage.${member}`, 'must be a function']
      }
      if (declaration.list === undefined) continue
      let reader: { list?: unknown; get?: unknown } | undefined
      try {
        reader = declaration.list.reader(storage) as { list?: unknown; get?: unknown } | undefined
      } catch (error) {
        return [`${this.whereOf(declaration)}.list.reader`, `threw: ${(error as Error).message}`]
      }
      if (typeof reader?.list !== 'function' || typeof reader.get !== 'function') {
        return host ? [`${this.whereOf(declaration)}.list.reader`, 'must return a reader with list() and get() methods'] : [`storage.${declaration.name}`, 'must have list() and get() methods']
      }
    }
    return undefined
  }

  /**
   * Renders an event inside the transaction of its change: the payload
   * `{"id","type","created_at","company_id","data"}`, with `data` serialized from `record` by
   * the resource's GET schema — the same bytes as its GET (spec 6.4). Given `previous` (an
   * `*.updated` event only), the payload also ends with `"previous_attributes":{…}`: each
   * top-level field whose rendering differs, with its value before, in the same bytes as GET
   * would have shown (docs/decisions.md, "What changed: previous_attributes").
   */
  renderEvent(input: AnyEventInput, now: Date): ChangeEvent {
    const { type, companyId, record, previous } = input
    if (typeof type !== 'string' || !this.isEventType(type)) throw new EventInputError(`unknown event type ${JSON.stringify(type)}`)
    if (!Number.isSafeInteger(companyId) || companyId < 1) throw new EventInputError('companyId must be a positive integer')
    const declaration = this.#byName.get(type.slice(0, type.lastIndexOf('.'))) as AnyResourceDeclaration
    const rendered = declaration.render(record) as { id: number }
    if (!Number.isSafeInteger(rendered.id)) throw new EventInputError(`the ${declaration.name} record of a ${type} event needs its id`)
    const id = newEventId()
    const data = this.#serializerOf(declaration)(rendered)
    const changes = previous === undefined || previous === null ? '' : `,"previous_attributes":${this.#previousAttributes(declaration, type, rendered, previous)}`
    return {
      id,
      company_id: companyId,
      type,
      resource_id: rendered.id,
      occurred_at: now,
      payload: `{"id":${JSON.stringify(id)},"type":${JSON.stringify(type)},"created_at":${JSON.stringify(timestamp(now))},"company_id":${companyId},"data":${data}${changes}}`,
    }
  }

  /** The serialized `previous_attributes` of an `*.updated` event: `{}` when no rendered field differs. */
  #previousAttributes(declaration: AnyResourceDeclaration, type: string, rendered: { id: number }, previous: unknown): string {
    // Only an update has a before and an after of the same record; a creation or deletion given
    // one is a producer's mistake, refused rather than silently dropped.
    if (!type.endsWith('.updated')) throw new EventInputError(`previous is for *.updated events only, not ${type}`)
    const before = declaration.render(previous) as { id: number }
    if (before.id !== rendered.id) throw new EventInputError(`the previous record of a ${type} event must be the same ${declaration.singular} (id ${rendered.id}), not id ${JSON.stringify(before.id)}`)
    const { fields, serialize } = this.#changeSerializerOf(declaration)
    return serialize(changedFields(fields, before as unknown as Record<string, unknown>, rendered as unknown as Record<string, unknown>))
  }

  /** The schema compiler Fastify uses for response bodies: the same bytes as GET. */
  #serializerOf(declaration: AnyResourceDeclaration): (value: unknown) => string {
    let serialize = this.#serializers.get(declaration.name)
    if (serialize === undefined) {
      // A copy: fast-json-stringify rewrites the schema it compiles (it reorders `type` arrays), and
      // the declaration's schema is also the one the served document shows.
      serialize = fastJsonStringify(structuredClone(declaration.item) as TSchema) as (value: unknown) => string
      this.#serializers.set(declaration.name, serialize)
    }
    return serialize
  }

  /**
   * The resource's top-level fields and a serializer for any subset of them: its GET schema with
   * nothing required, so each value present is written exactly as GET writes it and the others
   * are left out, in schema order.
   */
  #changeSerializerOf(declaration: AnyResourceDeclaration): ChangeSerializer {
    let found = this.#changeSerializers.get(declaration.name)
    if (found === undefined) {
      const { required: _required, ...partial } = structuredClone(declaration.item) as TSchema & { properties: Record<string, unknown> }
      found = { fields: Object.keys(partial.properties), serialize: fastJsonStringify(partial as TSchema) as (value: unknown) => string }
      this.#changeSerializers.set(declaration.name, found)
    }
    return found
  }

  /** The operation prose of `operationId`, from the declaration that owns it. */
  operationDocs(operationId: string, tag: string): OperationDocs | undefined {
    const declaration = this.#byName.get(tag)
    if (declaration === undefined) return undefined
    const own = declaration.docs.operations?.[operationId]
    if (own !== undefined) return own
    const plural = declaration.plural ?? declaration.name
    if (operationId === listOperationId(declaration.name)) {
      return {
        description: `Returns ${plural}, ordered by id ascending, one page at a time. Paging forward never skips or repeats a record created meanwhile: new records are appended at the end.${declaration.docs.list === undefined ? '' : ` ${declaration.docs.list}`}`,
        responses: { 200: `A page of ${plural}.` },
      }
    }
    if (operationId === getOperationId(declaration.name)) {
      return { description: `Returns one ${declaration.singular} of your company by id.`, responses: { 200: `The ${declaration.singular}.` } }
    }
    return undefined
  }
}

/** The shape of a host's declaration, checked field by field so a mistake names the field. */
function checkShape(value: unknown, where: string): void {
  const fail = (field: string, problem: string): never => {
    throw new ResourceDeclarationError(field === '' ? where : `${where}.${field}`, problem)
  }
  if (value === null || typeof value !== 'object') fail('', 'must be a resource declaration (defineResource)')
  const d = value as Partial<AnyResourceDeclaration>
  if (typeof d.name !== 'string' || !NAME.test(d.name)) fail('name', 'must be lower case letters, digits or "_", starting with a letter (at most 40)')
  const name = d.name as string
  const at = `${where} (${name})`
  const failAt = (field: string, problem: string): never => {
    throw new ResourceDeclarationError(`${at}.${field}`, problem)
  }
  if (typeof d.singular !== 'string' || d.singular.trim() === '') failAt('singular', 'must be a non-empty string')
  if (d.plural !== undefined && (typeof d.plural !== 'string' || d.plural.trim() === '')) failAt('plural', 'must be a non-empty string when given')
  if (typeof d.component !== 'string' || !COMPONENT.test(d.component) || RESERVED_COMPONENTS.has(d.component)) {
    failAt('component', 'must be a PascalCase schema name other than ErrorEnvelope and Pagination')
  }
  if (typeof d.module !== 'string' || !NAME.test(d.module)) failAt('module', 'must be lower case letters, digits or "_", starting with a letter')
  if (d.scope !== `${name}:read`) failAt('scope', `must be "${name}:read"`)
  const item = d.item as { type?: unknown; properties?: Record<string, unknown> } | undefined
  if (item?.type !== 'object' || item.properties === undefined || typeof item.properties !== 'object') failAt('item', 'must be a TypeBox object schema (Type.Object)')
  if ((item?.properties as Record<string, { type?: unknown }>).id?.type !== 'integer') failAt('item', 'must have an integer "id" property')
  if (typeof d.render !== 'function') failAt('render', 'must be a function from a record to the item')
  if (d.list === undefined && typeof d.routes !== 'function') failAt('list', 'is required unless the resource declares its own routes')
  if (d.list !== undefined) {
    const { filters, reader, toFilter } = d.list
    if (filters === null || typeof filters !== 'object') failAt('list.filters', 'must be an object of TypeBox schemas (each Type.Optional)')
    for (const parameter of Object.keys(filters)) {
      if (PAGE_PARAMETERS.has(parameter)) failAt(`list.filters.${parameter}`, 'is a parameter of every list; choose another name')
    }
    if (typeof reader !== 'function') failAt('list.reader', 'must be a function returning the reader')
    if (typeof toFilter !== 'function') failAt('list.toFilter', 'must be a function from the query to the filter')
  }
  if (d.routes !== undefined && typeof d.routes !== 'function') failAt('routes', 'must be a function when given')
  if (d.write !== undefined) {
    if (d.write.scope !== `${name}:write`) failAt('write.scope', `must be "${name}:write"`)
    if (typeof d.write.routes !== 'function') failAt('write.routes', 'must be a function')
  }
  if (d.storage !== undefined) failAt('storage', "is for the contract's resources; a host's routes read their own data")
  if (d.events !== undefined) {
    const actions = d.events.actions as readonly string[] | undefined
    if (!Array.isArray(actions) || actions.length === 0 || actions.some((action) => !(EVENT_ACTIONS as readonly string[]).includes(action)) || new Set(actions).size !== actions.length) {
      failAt('events.actions', `must be distinct actions among ${EVENT_ACTIONS.join(', ')}`)
    }
    if (d.events.position !== undefined) failAt('events.position', "orders the contract's events; a host's follow ours in declaration order")
  }
  if (d.docs === null || typeof d.docs !== 'object' || typeof d.docs.description !== 'string' || d.docs.description.trim() === '') {
    failAt('docs.description', 'must say what the resource is, for the reference document')
  }
}
