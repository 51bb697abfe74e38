/**
 * Is `/v1` still additive? (spec §9.2: "within a version all changes are additive"; docs/api.md §9)
 *
 * Compares the last released v1 document, `docs/openapi/v1-released.json`, with the document the
 * plugin serves now (`buildDocument()` in scripts/openapi.ts) and sorts every change into breaking
 * changes, additions and other changes (descriptions, examples, deprecations). The diff and most
 * classifications are api-smart-diff's; our few rules on top are under "Our own rules" below.
 * `test/openapi/compatibility.test.ts` runs the same comparison in CI.
 *
 *   npx tsx scripts/openapi-compat.ts            print the changes; exit 1 if one is breaking
 *   npx tsx scripts/openapi-compat.ts --release  when publishing a release, once CHANGELOG's
 *                                                Unreleased section sits under the new version:
 *                                                record the current document as the released
 *                                                one, and commit it with the release. Refused
 *                                                while a change is breaking, so a red CI cannot
 *                                                be turned green by moving the baseline.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { apiDiff, type Diff, type DiffType } from 'api-smart-diff'
import { buildDocument } from './openapi.js'

export const RELEASED_FILE = fileURLToPath(new URL('../docs/openapi/v1-released.json', import.meta.url))
export const CHANGELOG_FILE = fileURLToPath(new URL('../CHANGELOG.md', import.meta.url))

type JsonObject = { [key: string]: unknown }
type Path = readonly (string | number)[]

/** One change between two documents, as a maintainer reads it. */
export interface Change {
  /** One line, e.g. `response 200 of GET /v1/todos: removed field data[].title`. */
  message: string
  /** What a CHANGELOG entry names for it: a path, parameter, field, enum value, header or event type. */
  subject: string
  type: DiffType
  /** The rule of ours (below) that classified it, where that differs from api-smart-diff's answer. */
  rule?: string
}

export interface Compatibility {
  breaking: Change[]
  /** The non-breaking changes; each belongs in CHANGELOG's Unreleased section. */
  additions: Change[]
  /** Annotations (descriptions, examples), deprecations, and what api-smart-diff leaves unclassified. */
  other: Change[]
}

interface Documents {
  before: JsonObject
  after: JsonObject
}

/**
 * Every change from `released` to `current` (parsed OpenAPI 3.x documents), grouped by kind.
 *
 * @example
 *   const { breaking } = compareDocuments(released, JSON.parse(await buildDocument()))
 *   // breaking[0].message === 'removed operation GET /v1/roles/{id}'
 */
export function compareDocuments(released: unknown, current: unknown): Compatibility {
  const documents = { before: webhooksAsOperations(structuredClone(released)), after: webhooksAsOperations(structuredClone(current)) }
  // apiDiff writes its normalisations (an empty `enum` beside a new one, …) into the documents it
  // is given: it diffs copies, and our rules read the documents as they were.
  const changes = apiDiff(structuredClone(documents.before), structuredClone(documents.after))
    .filter(isContract)
    .map((diff) => toChange(diff, documents))
  return group(keepMostSevere(changes))
}

// ─── Webhooks ──────────────────────────────────────────────────────────────────────────────────

const WEBHOOK_KEY = 'webhook '
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/**
 * OpenAPI 3.1's `webhooks` are requests WE send: the integrator receives the payload the way a
 * client receives a response, so removing a field breaks them and adding one does not. api-smart-diff
 * 1.0.6 has no rules for `webhooks` (every change there comes out `unclassified`, and $refs such as
 * the payload's `data` are not followed), and its request-body rules would read the payload
 * backwards. So before diffing, each event becomes a pseudo-operation under `paths`
 * (`webhook todos.created`) whose payload is a response, with the headers we send (`webhook-id`, the
 * signatures) as that response's headers. The receiver's answer (any 2xx; 410 disables) is behaviour
 * described in prose, not a schema anyone parses, and is left out.
 */
function webhooksAsOperations(document: unknown): JsonObject {
  if (!isObject(document)) throw new TypeError('an OpenAPI document is a JSON object')
  const { webhooks, ...rest } = document
  const paths: JsonObject = { ...(isObject(rest.paths) ? rest.paths : {}) }
  for (const [event, item] of Object.entries(isObject(webhooks) ? webhooks : {})) {
    const pathItem = resolve(document, item)
    if (isObject(pathItem)) paths[`${WEBHOOK_KEY}${event}`] = eventAsPathItem(document, pathItem)
  }
  return { ...rest, paths }
}

function eventAsPathItem(document: JsonObject, pathItem: JsonObject): JsonObject {
  const mapped: JsonObject = {}
  for (const [key, operation] of Object.entries(pathItem)) {
    mapped[key] = METHODS.has(key) && isObject(operation) ? payloadAsResponse(document, operation) : operation
  }
  return mapped
}

function payloadAsResponse(document: JsonObject, operation: JsonObject): JsonObject {
  const { requestBody, parameters, responses: _receiversAnswer, ...rest } = operation
  const body = resolve(document, requestBody)
  const content = isObject(body) ? body.content : undefined
  const payload = { description: 'The event as the integrator receives it.', headers: parametersAsHeaders(document, parameters) }
  return { ...rest, responses: { payload: content === undefined ? payload : { ...payload, content } } }
}

function parametersAsHeaders(document: JsonObject, parameters: unknown): JsonObject {
  const headers: JsonObject = {}
  for (const parameter of Array.isArray(parameters) ? parameters : []) {
    const resolved = resolve(document, parameter)
    if (!isObject(resolved) || typeof resolved.name !== 'string') continue
    const { name, in: _in, ...header } = resolved
    headers[name] = header
  }
  return headers
}

const isWebhook = (pathKey: unknown): pathKey is string => typeof pathKey === 'string' && pathKey.startsWith(WEBHOOK_KEY)

/**
 * api-smart-diff follows every $ref, so a change to a shared component is reported again at each
 * operation that uses it, classified there as request or response. Under `components` the same change
 * is read with request rules only (a field removed from a response schema counts as harmless), so
 * those copies are dropped. Security schemes are not $ref'd: a change inside one (the header's name)
 * stays; one added or removed as a whole matters only where an operation's `security` names it, and
 * that is diffed there (api-smart-diff calls a new scheme breaking even when it is only an alternative).
 */
function isContract(diff: Diff): boolean {
  if (diff.path[0] !== 'components') return true
  return diff.path[1] === 'securitySchemes' && diff.path.length > 3
}

// ─── Our own rules ─────────────────────────────────────────────────────────────────────────────
// Each covers a case where api-smart-diff 1.0.6 answers otherwise on our document; the tests in
// test/openapi/compatibility.test.ts show each one. A rule returns undefined where it does not apply.

type Side = 'request' | 'response'

interface OwnRule {
  name: string
  classify: (diff: Diff, place: Place, documents: Documents) => DiffType | undefined
}

/**
 * Wherever a schema's `type` changes, compare the sets of types. api-smart-diff reverses its request
 * rules for responses, and its request rule calls every `type` change breaking, so in responses every
 * `type` change came out harmless: `string` → `integer`, and `string` → `["string","null"]` (a client
 * that never expected null gets one); in requests, accepting null as well came out breaking. The rule:
 * a request may only come to accept more (narrowing `["string","null"]` to `string` refuses what
 * clients send), a response may only come to send less (dropping null is safe, adding it is not).
 * `integer` counts as a kind of `number`.
 */
const typeSets: OwnRule = {
  name: 'type-sets',
  classify(diff, place, documents) {
    if (place.side === undefined || place.schema?.keyword[0] !== 'type') return undefined
    const [before, after] = typesAround(diff, place, documents)
    if (before === undefined || after === undefined) return 'breaking'
    const narrowed = !includesAll(after, before)
    const widened = !includesAll(before, after)
    return (place.side === 'request' ? narrowed : widened) ? 'breaking' : 'non-breaking'
  },
}

/**
 * An enum is a set of values, compared like types, with one decision of ours: a value removed from
 * an enum in a response or event payload is breaking. api-smart-diff calls it harmless (clients
 * receive fewer values), but in this API those enums are the states of stored records (`status`,
 * `priority`, …): removing one means records that had it are reported otherwise, and an integrator's
 * mirror and its handling of that value silently lose a meaning; section 9 allows additions only.
 * api-smart-diff also sees an enum introduced where there was none as values added (harmless in a
 * request, though the field then refuses every other value) and an enum dropped as values removed.
 * Values added to an existing enum are additions on both sides. api-smart-diff calls one in a
 * response breaking; we follow the practice of the APIs integrators know best (Stripe's among them):
 * a new status or priority is how a record type grows, and docs/api.md §9 tells clients to treat
 * a value they do not know as "other", as they ignore unknown fields and event types.
 */
const enumSets: OwnRule = {
  name: 'enum-sets',
  classify(diff, place, documents) {
    if (place.side === undefined || place.schema?.keyword[0] !== 'enum' || place.schema.keyword.length !== 2) return undefined
    const schemaPath = diff.path.slice(0, -2)
    const hadEnum = hasEnum(valueAt(documents.before, schemaPath))
    const hasEnumNow = hasEnum(valueAt(documents.after, schemaPath))
    if (diff.action === 'add' && !hadEnum) return place.side === 'request' ? 'breaking' : 'non-breaking'
    if (diff.action === 'remove' && !hasEnumNow) return place.side === 'request' ? 'non-breaking' : 'breaking'
    if (place.side === 'response') return diff.action === 'add' ? 'non-breaking' : 'breaking'
    return undefined
  },
}

/**
 * A field removed, required or not. api-smart-diff calls removing an optional field harmless on both
 * sides: in a response clients "must cope with its absence" (so the error envelope's `details` could
 * go), in a request the server just stops reading it. But section 9 says nothing that exists is
 * removed, integrators read an optional field whenever it is there, and this API refuses request
 * fields it does not know (docs/api.md §9, a 422), so a client that still sends one starts failing:
 * for us a removed field is what a removed parameter is.
 */
const fieldRemoval: OwnRule = {
  name: 'field-removal',
  classify: (diff, place) =>
    place.side !== undefined && place.schema?.keyword[0] === 'properties' && place.schema.keyword.length === 2 && diff.action === 'remove'
      ? 'breaking'
      : undefined,
}

const OWN_RULES: readonly OwnRule[] = [typeSets, enumSets, fieldRemoval]

/** null: no `type` keyword, so any type. */
type TypeSet = ReadonlySet<string> | null

function typesAround(diff: Diff, place: Place, documents: Documents): [TypeSet | undefined, TypeSet | undefined] {
  if (place.schema?.keyword.length === 1) return [typeSet(diff.action === 'add' ? null : diff.before), typeSet(diff.action === 'remove' ? null : diff.after)]
  // One element of a `type` array added, removed or replaced: read both whole arrays.
  const typePath = diff.path.slice(0, -1)
  return [typeSet(valueAt(documents.before, typePath)), typeSet(valueAt(documents.after, typePath))]
}

function typeSet(value: unknown): TypeSet | undefined {
  if (value === null) return null
  if (typeof value === 'string') return new Set([value])
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return new Set(value as string[])
  return undefined
}

function includesAll(outer: TypeSet, inner: TypeSet): boolean {
  if (outer === null) return true
  if (inner === null) return false
  return [...inner].every((type) => outer.has(type) || (type === 'integer' && outer.has('number')))
}

const hasEnum = (schema: unknown): boolean => isObject(schema) && Array.isArray(schema.enum)

// ─── Where a change is ─────────────────────────────────────────────────────────────────────────

interface Place {
  /** `GET /v1/todos` or `event todos.created`; undefined outside operations. */
  operation?: string
  /** `response 200 of GET /v1/todos`, `query parameter status of GET /v1/todos`, `document`, … */
  target: string
  side?: Side
  /** What the change names when it is not inside a schema: the path, parameter, header, event… */
  subject: string
  /** The path below the target. */
  rest: Path
  /** Inside a schema: the field (`data`, `[]`, `title`) and the keyword that changed (`enum`, 2). */
  schema?: { fields: string[]; keyword: Path }
}

function placeOf(diff: Diff, documents: Documents): Place {
  const [root, pathKey, method, part, ...rest] = diff.path
  if (root === 'components') return { target: `security scheme ${String(diff.path[2])}`, subject: String(diff.path[2]), rest: diff.path.slice(3) }
  if (root !== 'paths' || method === undefined) return { target: 'document', subject: String(diff.path.at(-1) ?? ''), rest: diff.path }
  const event = isWebhook(pathKey) ? pathKey.slice(WEBHOOK_KEY.length) : undefined
  const operation = event === undefined ? `${String(method).toUpperCase()} ${String(pathKey)}` : `event ${event}`
  const subject = event ?? String(pathKey)
  if (part === 'parameters') return parameterPlace(diff, documents, operation)
  if (part === 'requestBody') return schemaPlace({ operation, target: `request body of ${operation}`, side: 'request', subject, rest }, ['content', '*', 'schema'])
  if (part === 'responses') return responsePlace({ operation, target: operation, side: 'response', subject, rest }, event !== undefined)
  return { operation, target: operation, subject, rest: part === undefined ? [] : [part, ...rest] }
}

function parameterPlace(diff: Diff, documents: Documents, operation: string): Place {
  const rest = diff.path.slice(5)
  const added = diff.action === 'add' && rest.length === 0
  // An operation that had none gains its whole list at once: name what it holds.
  const whole = added && diff.path.length === 4 && Array.isArray(diff.after) ? diff.after.map((item) => resolve(documents.after, item)) : undefined
  const parameter = whole !== undefined ? (whole.length === 1 ? whole[0] : undefined) : added ? resolve(documents.after, diff.after) : valueAt(documents.before, diff.path.slice(0, 5))
  const name = isObject(parameter)
    ? String(parameter.name)
    : whole !== undefined
      ? whole.map((item) => (isObject(item) ? String(item.name) : '?')).join(', ')
      : `#${String(diff.path[4])}`
  const label = isObject(parameter) ? `${String(parameter.in)} parameter ${name}` : `parameter ${name}`
  if (rest.length === 0) return { operation, target: operation, side: 'request', subject: name, rest: ['parameter', label] }
  return schemaPlace({ operation, target: `${label} of ${operation}`, side: 'request', subject: name, rest }, ['schema'])
}

function responsePlace(place: Place, event: boolean): Place {
  const [code, ...inside] = place.rest
  if (code === undefined || inside.length === 0) return { ...place, rest: code === undefined ? [] : ['response', code] }
  const target = event ? `payload of ${place.target}` : `response ${String(code)} of ${place.target}`
  const [section, name] = inside
  if (section === 'headers' && name !== undefined) {
    const header = { ...place, subject: String(name) }
    if (inside.length === 2) return { ...header, target, rest: ['header', name] }
    return schemaPlace({ ...header, target: `header ${String(name)} of ${target}`, rest: inside.slice(2) }, ['schema'])
  }
  if (section === 'content' && inside[2] !== 'schema') return { ...place, target, rest: inside.slice(2) }
  return schemaPlace({ ...place, target, rest: inside }, ['content', '*', 'schema'])
}

/** When `rest` starts with `prefix` (`*`: any key), what follows is inside a schema. */
function schemaPlace(place: Place, prefix: readonly string[]): Place {
  const inSchema = place.rest.length > prefix.length && prefix.every((key, index) => key === '*' || place.rest[index] === key)
  return inSchema ? { ...place, schema: fieldOf(place.rest.slice(prefix.length)) } : place
}

/** `properties/data/items/properties/title/type` → fields `data`, `[]`, `title`; keyword `type`. */
function fieldOf(path: Path): { fields: string[]; keyword: Path } {
  const fields: string[] = []
  let index = 0
  for (;;) {
    const key = path[index]
    if (key === 'properties' && index + 2 < path.length) fields.push(String(path[index + 1]))
    else if (key === 'items') fields.push('[]')
    else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && index + 2 < path.length) fields.push('')
    else return { fields: fields.filter((field) => field !== ''), keyword: path.slice(index) }
    index += key === 'items' ? 1 : 2
  }
}

const fieldName = (fields: readonly string[]): string =>
  fields.reduce((name, field) => (field === '[]' || name === '' ? `${name}${field}` : `${name}.${field}`), '')

// ─── Saying it ─────────────────────────────────────────────────────────────────────────────────

interface Wording {
  message: string
  subject: string
  /** Changes with the same key say the same thing (a removed field is also no longer required): the most severe stays. */
  key: string
  /** On equal severity, the higher says it better. */
  preference: number
}

interface Classified extends Change, Wording {}

function toChange(diff: Diff, documents: Documents): Classified {
  const place = placeOf(diff, documents)
  const own = OWN_RULES.map((rule) => ({ name: rule.name, type: rule.classify(diff, place, documents) })).find((answer) => answer.type !== undefined)
  const type = own?.type ?? diff.type
  return { ...describe(diff, place, documents), type, ...(own !== undefined && own.type !== diff.type ? { rule: own.name } : {}) }
}

const pastTense = (diff: Diff): string => ({ add: 'added', remove: 'removed', replace: 'changed', rename: 'renamed' })[diff.action]

function describe(diff: Diff, place: Place, documents: Documents): Wording {
  if (place.schema !== undefined) return describeSchema(diff, place, documents)
  const [first, second] = place.rest
  const say = (message: string, subject = place.subject): Wording => ({ message, subject, key: message, preference: 0 })
  if (diff.path.length === 1 && diff.action === 'rename') return say(`renamed path ${String(diff.before)} to ${String(diff.after)}`, String(diff.after))
  if (place.operation !== undefined && first === undefined) {
    return say(`${pastTense(diff)} ${place.operation.startsWith('event ') ? `webhook event ${place.subject}` : `operation ${place.operation}`}`)
  }
  if ((first === 'parameter' || first === 'response' || first === 'header') && place.rest.length === 2) return say(memberChange(diff, place, String(first), String(second)))
  if (first === 'required' && place.rest.length === 1) return say(`${place.target}: ${diff.after === true ? 'now required' : 'no longer required'}`)
  return say(`${place.target}: ${pastTense(diff)} ${place.rest.join('.')}${valueChange(diff)}`)
}

/** A whole parameter, response or header added or removed. */
function memberChange(diff: Diff, place: Place, kind: string, name: string): string {
  const required = kind !== 'parameter' || diff.action !== 'add' ? '' : isObject(diff.after) && diff.after.required === true ? 'required ' : 'optional '
  const label = kind === 'parameter' ? name : `${kind} ${name}`
  return `${pastTense(diff)} ${required}${label} ${diff.action === 'add' ? 'to' : 'of'} ${place.target}`
}

function describeSchema(diff: Diff, place: Place, documents: Documents): Wording {
  const { fields, keyword } = place.schema ?? { fields: [], keyword: [] }
  const [word, item] = keyword
  const field = fieldName(fields)
  const leaf = fields.filter((name) => name !== '[]').at(-1) ?? place.subject
  const of = field === '' ? '' : `field ${field}: `
  const say = (what: string, subject: string, key = what, preference = 0): Wording => ({
    message: `${place.target}: ${what}`,
    subject,
    key: `${place.target}|${key}`,
    preference,
  })
  if (word === 'properties' && item !== undefined) {
    const name = fieldName([...fields, String(item)])
    return say(`${pastTense(diff)} field ${name}`, String(item), `field ${name} ${diff.action}`, 1)
  }
  if (word === 'required' && keyword.length === 2 && diff.action !== 'replace') {
    const required = String(diff.action === 'add' ? diff.after : diff.before)
    const name = fieldName([...fields, required])
    // A field added as required to a request breaks because it is required: say that rather than "added field".
    const preference = diff.action === 'add' && place.side === 'request' ? 2 : 0
    return say(diff.action === 'add' ? `newly required field ${name}` : `field ${name} no longer required`, required, `field ${name} ${diff.action}`, preference)
  }
  if (word === 'enum' && keyword.length === 2) {
    if (diff.action === 'replace') return say(`${of}enum value ${JSON.stringify(diff.before)} replaced by ${JSON.stringify(diff.after)}`, String(diff.after))
    const value = diff.action === 'add' ? diff.after : diff.before
    return say(`${of}${pastTense(diff)} enum value ${JSON.stringify(value)}`, String(value))
  }
  if (word === 'type') {
    const [before, after] = typesAround(diff, place, documents)
    return say(`${of}type changed from ${typeName(before)} to ${typeName(after)}`, leaf)
  }
  if (keyword.length === 0) return say(`${pastTense(diff)} ${field === '' ? 'schema' : `schema of field ${field}`}`, leaf)
  return say(`${of}${pastTense(diff)} ${keyword.join('.')}${valueChange(diff)}`, leaf)
}

function typeName(types: TypeSet | undefined): string {
  if (types === undefined) return 'an unreadable type'
  return types === null ? 'any type' : [...types].join('|')
}

function valueChange(diff: Diff): string {
  const show = (value: unknown): string => {
    const text = JSON.stringify(value) ?? 'nothing'
    return text.length > 60 ? `${text.slice(0, 57)}…` : text
  }
  if (diff.action === 'replace') return ` from ${show(diff.before)} to ${show(diff.after)}`
  return ` ${show(diff.action === 'remove' ? diff.before : diff.after)}`
}

// ─── Grouping ──────────────────────────────────────────────────────────────────────────────────

const SEVERITY: Record<DiffType, number> = { breaking: 4, unclassified: 3, 'non-breaking': 2, deprecated: 1, annotation: 0 }

function keepMostSevere(changes: readonly Classified[]): Change[] {
  const kept = new Map<string, Classified>()
  for (const change of changes) {
    const previous = kept.get(change.key)
    const severity = previous === undefined ? 1 : Math.sign(SEVERITY[change.type] - SEVERITY[previous.type])
    if (severity > 0 || (severity === 0 && previous !== undefined && change.preference > previous.preference)) kept.set(change.key, change)
  }
  return [...kept.values()].map(({ message, subject, type, rule }) => ({ message, subject, type, ...(rule === undefined ? {} : { rule }) }))
}

function group(changes: readonly Change[]): Compatibility {
  return {
    breaking: changes.filter((change) => change.type === 'breaking'),
    additions: changes.filter((change) => change.type === 'non-breaking'),
    other: changes.filter((change) => change.type !== 'breaking' && change.type !== 'non-breaking'),
  }
}

// ─── The CHANGELOG ─────────────────────────────────────────────────────────────────────────────

/** The text under CHANGELOG's `## [Unreleased]` (or `## Unreleased`) heading, up to the next `## `. */
export function unreleasedSection(changelog: string): string {
  const lines = changelog.split('\n')
  const start = lines.findIndex((line) => /^## \[?Unreleased\]?/i.test(line))
  if (start === -1) return ''
  const end = lines.findIndex((line, index) => index > start && line.startsWith('## '))
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n')
}

/**
 * The additions that CHANGELOG's Unreleased section does not mention. Integrators learn from the
 * CHANGELOG what they may start to use, so each addition's subject (path, parameter, field, enum
 * value, header or event type) must appear there in a code span: "New filter `tag_id` on `GET /v1/todos`".
 */
export function unmentionedAdditions(additions: readonly Change[], changelog: string): Change[] {
  const spans = [...unreleasedSection(changelog).matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? '')
  return additions.filter((addition) => !spans.some((span) => containsName(span, addition.subject)))
}

function containsName(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`(^|[^A-Za-z0-9_])${escaped}($|[^A-Za-z0-9_])`).test(text)
}

// ─── JSON ──────────────────────────────────────────────────────────────────────────────────────

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Follows local $refs (`#/components/…`). */
function resolve(document: JsonObject, value: unknown, seen: ReadonlySet<string> = new Set()): unknown {
  if (!isObject(value) || typeof value.$ref !== 'string' || !value.$ref.startsWith('#/') || seen.has(value.$ref)) return value
  const keys = value.$ref.slice(2).split('/').map((key) => key.replaceAll('~1', '/').replaceAll('~0', '~'))
  const target = keys.reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), document)
  return resolve(document, target, new Set([...seen, value.$ref]))
}

/** The value at a diff's path: api-smart-diff's paths go through $refs as if they were inlined. */
function valueAt(document: JsonObject, path: Path): unknown {
  let node: unknown = document
  for (const key of path) {
    node = resolve(document, node)
    if (Array.isArray(node) && typeof key === 'number') node = node[key]
    else if (isObject(node)) node = node[key]
    else return undefined
  }
  return resolve(document, node)
}

// ─── Command line ──────────────────────────────────────────────────────────────────────────────

function print(title: string, changes: readonly Change[]): void {
  if (changes.length === 0) return
  console.log(`${title} (${changes.length}):`)
  for (const change of changes) console.log(`  - ${change.message}${change.rule === undefined ? '' : `  [our rule: ${change.rule}]`}`)
}

async function main(argv: readonly string[]): Promise<void> {
  const current = await buildDocument()
  const released: unknown = JSON.parse(readFileSync(RELEASED_FILE, 'utf8'))
  const { breaking, additions, other } = compareDocuments(released, JSON.parse(current))
  print('Breaking changes, not allowed within /v1', breaking)
  print('Additions', additions)
  print('Other changes', other)
  print("Additions not yet mentioned in CHANGELOG.md's Unreleased section", unmentionedAdditions(additions, readFileSync(CHANGELOG_FILE, 'utf8')))
  if (breaking.length > 0) {
    process.exitCode = 1
    if (argv.includes('--release')) console.error('Not released: a breaking change belongs in a new version (docs/api.md §9).')
    return
  }
  if (breaking.length + additions.length + other.length === 0) console.log('No changes since the released document.')
  if (argv.includes('--release')) {
    writeFileSync(RELEASED_FILE, current)
    console.log(`wrote ${RELEASED_FILE}`)
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error)
    process.exitCode = 1
  })
}
