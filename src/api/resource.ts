import type { Static, TObject, TProperties, TSchema } from '@sinclair/typebox'
import type { ResourceReader, Storage } from '../ports/storage.js'
import type { ResourceExamples } from './examples.js'
import type { FilterContext } from './filters.js'
import type { ApiContext, RouteSpec, WriteContext } from './route-spec.js'

/** What can happen to a record, as the last part of an event type (`todos.created`). */
export const EVENT_ACTIONS = ['created', 'updated', 'deleted'] as const
export type EventAction = (typeof EVENT_ACTIONS)[number]

/** An operation's prose in the reference document (`description`, and each success status's). */
export interface OperationDocs {
  description?: string
  responses?: Readonly<Record<number, string>>
}

/** A write answering 201 with the new record (`created`), which `Location` names. */
export function createDocs(description: string, created: string): OperationDocs {
  return { description, responses: { 201: `${created}; \`Location\` names it.` } }
}

/** A write answering 200 with the record after it (`changed`). */
export function changeDocs(description: string, changed: string): OperationDocs {
  return { description, responses: { 200: changed } }
}

/**
 * How a resource is listed and read by id: `GET /v1/<name>` (paged, filtered) and
 * `GET /v1/<name>/:id`, both answered from `reader`.
 */
export interface ListDeclaration<R, F, P extends TProperties> {
  /** Filter parameters beyond `page` and `per_page`: strict, so an unknown one is a 422. */
  filters: P
  /**
   * Where the records come from. Ours read a member of the `Storage` port
   * (`(storage) => storage.todos`); a host's resource returns a reader of its own. Called once
   * at registration, where a reader without `list()` and `get()` fails `ready()`.
   */
  reader(storage: Storage): ResourceReader<R, F>
  /** Turns validated query parameters into the reader's filter; throws `ValidationError` on a cross-field error (a 422). */
  toFilter(query: Static<TObject<P>>, context: FilterContext): F | Promise<F>
}

/**
 * Everything the plugin knows about one resource, declared once: the route table, the scopes
 * and their modules, the event catalogue, the reference document and the conformance suite's
 * resource list are derived from the declarations (`ResourceCatalogue`). The nine resources of
 * the contract are declared in `src/api/`; a host declares its own the same way and passes them
 * as the plugin's `resources` option (docs/extending.md).
 *
 * @example
 * export const teams = defineResource({
 *   name: 'teams', singular: 'team', component: 'Team', module: 'teams', scope: 'teams:read',
 *   item: Team, render: (team: TeamRecord) => ({ ... }),
 *   list: { filters: { updated_since: Type.Optional(Timestamp) }, reader: () => teamReader, toFilter: (query) => ({ ... }) },
 *   events: { actions: EVENT_ACTIONS },
 *   docs: { description: 'Teams of your company.' },
 * })
 */
export interface ResourceDeclaration<
  N extends string = string,
  R extends { id: number } = { id: number },
  F = unknown,
  P extends TProperties = TProperties,
  W extends TSchema = TSchema,
  S extends string = string,
  E extends EventAction = EventAction,
> {
  /** Plural, lower case: the path (`/v1/<name>`), the tag, the prefix of its event types. */
  name: N
  /** One record, in prose: `user`, `to-do`. */
  singular: string
  /** Many records, in prose, when not `name`: `to-dos`. */
  plural?: string
  /** Its wire schema's name in the reference document (`components.schemas`): `Todo`. */
  component: string
  /** The platform module its scopes belong to: the route answers 403 while it is inactive for the company. */
  module: string
  /** The scope a key needs to read it: `<name>:read`. */
  scope: S
  /** What a record is on the wire (a TypeBox object schema): the GET's data, an event's data. */
  item: W
  /** A stored record as `item`. */
  render(record: R): Static<W>
  /** A collection: its list and by-id routes. Without it, `routes` declares its reads (the company). */
  list?: ListDeclaration<R, F, P>
  /** Read routes of its own, beside or instead of `list` (`GET /v1/company`). */
  routes?(context: ApiContext): RouteSpec[]
  /** Its write routes, mounted only when the host configured writes; they need `scope`. */
  write?: { scope: S; routes(context: WriteContext): RouteSpec[] }
  /** The `Storage` members its own `routes` call (checked at registration); a `list` is checked through its reader. */
  storage?: Readonly<Partial<Record<keyof Storage, 'function'>>>
  /**
   * Its event types, `<name>.<action>`. `position` orders them in the event catalogue (the
   * contract lists its events in an order of its own, spec 6); a host's come after ours, in the
   * order of the `resources` option.
   */
  events?: { actions: readonly E[]; position?: number }
  docs: ResourceDocs
  /**
   * What the conformance suite checks of the contract's readers (`src/conformance`): a stored
   * record's exact keys, every member of its filter, and what each field must come back as.
   * A host's resource leaves it out.
   */
  conformance?: { recordKeys: readonly string[]; filterKeys?: readonly string[]; fieldKinds?: FieldKinds }
}

type Missing<R, K extends ReadonlyArray<keyof R>> = Exclude<keyof R, K[number]>

/** A key list the compiler proves complete: leaving a field of `R` out is a type error. */
export function exactKeys<R>() {
  return <const K extends ReadonlyArray<keyof R>>(
    keys: K & ([Missing<R, K>] extends [never] ? unknown : { missingKeys: Missing<R, K> }),
  ): readonly string[] => keys as readonly string[]
}

/** What a field must come back as, beyond deep equality: the traps of each storage type. */
export interface FieldKinds {
  /** `Date` instances (not strings or numbers), exact to the millisecond. */
  instants: readonly string[]
  /** `YYYY-MM-DD` strings, the day as entered (not `Date`s, not shifted by a time zone). */
  days: readonly string[]
  /** Ids, references and integers: `number`, never an int8 string. */
  integers: readonly string[]
  /** `true`/`false`, never 0/1. */
  booleans: readonly string[]
  /** Arrays/objects stored as JSON or child rows: same content, same order. */
  structures: readonly string[]
  /** Free text: byte for byte (quotes, non-ASCII, newlines; `''` stays `''`, never `null`). */
  texts: readonly string[]
  /** Non-integer numbers (`37.5`, `7.25`): the same value, a `number`. */
  fractions: readonly string[]
}

/** The reference document's prose for a resource: shapes, formats and enums come from its schemas. */
export interface ResourceDocs {
  /** What the resource is, for its tag. */
  description: string
  /** What a field means beyond its type (`components.schemas`); `id`, `created_at` and `updated_at` have a shared text. */
  fields?: Readonly<Record<string, string>>
  /** What its filter parameters mean, beyond the shared texts of `page`, `updated_since`, `employee_id`…. */
  parameters?: Readonly<Record<string, string>>
  /** Appended to the list operation's description. */
  list?: string
  /** Prose of its other operations (writes, its own routes), by operation id. */
  operations?: Readonly<Record<string, OperationDocs>>
  /**
   * The request each of its operations' examples makes over the seed data, by operation id, in
   * the order `npm run openapi` sends them (src/api/examples.ts). The contract's resources
   * declare one per operation; a host's resource leaves it out (the script records the contract's only).
   */
  examples?: ResourceExamples
}

/** Any declaration, whatever its record and filter types. */
export type AnyResourceDeclaration = ResourceDeclaration<string, any, any, any, TSchema, string, EventAction>

/**
 * Declares a resource: returns `declaration` unchanged, typed so that `render` matches `item`,
 * `toFilter` matches `filters`, and the names stay literal for the scope and event types derived
 * from them. The plugin checks every declaration at registration (`ResourceCatalogue`).
 */
export function defineResource<
  const N extends string,
  R extends { id: number },
  F,
  P extends TProperties,
  W extends TSchema,
  const S extends string,
  const E extends EventAction = never,
>(declaration: ResourceDeclaration<N, R, F, P, W, S, E>): ResourceDeclaration<N, R, F, P, W, S, E> {
  return declaration
}
