import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import type { FastifySchemaCompiler } from 'fastify'
import { NotFoundError, ValidationError, type ErrorDetail } from '../errors.js'
import { isCalendarDay, parseInstant } from '../time/calendar.js'
import type { StageResponses } from './stage.js'

/**
 * Validation runs on every route (a route without parameters still refuses an unknown one) and
 * after idempotency, so its 422 is recorded and replayed. A path id that fails its schema is a
 * 404: no resource can live at that URL.
 */
export const VALIDATE_RESPONSES: StageResponses = {
  stage: 'validate',
  responses: [
    { status: 404, code: 'not_found', when: (route) => route.schema.params !== undefined },
    { status: 422, code: 'validation_error' },
  ],
}

/** Formats used by our schemas, with the sentence a client sees when a value misses one. */
const FORMATS = {
  date: { validate: isCalendarDay, message: 'must be an existing calendar day (YYYY-MM-DD)' },
  'date-time': {
    validate: (value: string) => parseInstant(value) !== null,
    message: 'must be an ISO 8601 timestamp with Z or an offset (URL-encode + as %2B)',
  },
} as const

type JsonSchema = { type?: string; properties?: Record<string, JsonSchema> }

/**
 * Builds the validator compiler of our encapsulated context.
 *
 * Fastify's default Ajv setup is lenient in ways an integration API must not be:
 * `removeAdditional` silently drops a misspelt filter (so it would return everything) and
 * `coerceTypes` turns `1e2` or `0x10` into numbers. Ours rejects unknown parameters and
 * coerces query and path strings strictly: integers are plain digits, booleans are
 * exactly `true` or `false`. Every failure is a 422 `validation_error` whose `details`
 * name each offending field — except a malformed path id, which is a 404: no resource
 * can live at that URL.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<JsonSchema> {
  const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, removeAdditional: false, verbose: true })
  for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format.validate)

  return ({ schema, httpPart }) => {
    const validate = ajv.compile(schema)
    const coerce = httpPart === 'querystring' || httpPart === 'params'
    return (data: unknown) => {
      const value = coerce ? coerceStrings(schema, data) : data
      if (validate(value)) {
        const unstorable = unstorableText(value, '')
        return unstorable.length === 0 ? { value } : { error: new ValidationError(unstorable) }
      }
      if (httpPart === 'params') return { error: new NotFoundError('Resource not found') }
      return { error: new ValidationError(toDetails(validate, httpPart)) }
    }
  }
}

/**
 * Strings no database can keep as sent: a NUL character (Postgres text refuses it) or an
 * unpaired surrogate (UTF-8 storage replaces it). Refused with a 422 rather than a 500, or
 * text silently changed. Runs on values the schema already accepted, so depth is bounded.
 */
function unstorableText(value: unknown, path: string): ErrorDetail[] {
  if (typeof value === 'string') {
    const wellFormed = (value as string & { isWellFormed(): boolean }).isWellFormed()
    return value.includes('\u0000') || !wellFormed
      ? [{ field: path === '' ? 'body' : path, message: 'must not contain NUL characters or unpaired surrogates' }]
      : []
  }
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, child]) => unstorableText(child, path === '' ? key : `${path}.${key}`))
}

const INTEGER = /^-?(0|[1-9]\d*)$/
const BOOLEANS: Record<string, boolean> = { true: true, false: false }

/** Converts the string values of a flat object to the types its schema declares, strictly. */
function coerceStrings(schema: JsonSchema, data: unknown): unknown {
  if (data === null || typeof data !== 'object') return data ?? {}
  // No prototype: a parameter named `__proto__` must stay a parameter (and be rejected as unknown).
  const out: Record<string, unknown> = Object.create(null)
  for (const [key, raw] of Object.entries(data)) {
    const type = schema.properties?.[key]?.type
    let value: unknown = raw
    if (typeof raw === 'string') {
      if (type === 'integer' && INTEGER.test(raw)) value = Number(raw)
      else if (type === 'boolean' && Object.hasOwn(BOOLEANS, raw)) value = BOOLEANS[raw]
    }
    out[key] = value
  }
  return out
}

/**
 * What a value failing one of our schemas' `pattern`s must be, in words: a client never sees a
 * regular expression. A pattern missing here reads "is not in the expected form" and fails
 * test/errors/validation-words.test.ts, which lists every pattern of the routes' query and
 * body schemas. (Path ids are never worded: one that fails its pattern is a 404.)
 */
export const PATTERN_MESSAGES: Readonly<Record<string, string>> = {
  '\\S': 'must contain a non-space character',
  '^[^\\s@]+@[^\\s@.]+(\\.[^\\s@.]+)+$': 'must be an email address such as ada@example.com',
  '^[a-z_]+\\.[a-z_]+$': 'must be an event type such as todos.created',
  '^aud_[a-z2-7]{24}$': 'must be an audit entry id (aud_ and 24 letters and digits)',
}

/**
 * The keywords `messageOf` words itself. Ajv's own sentences (`must NOT have fewer than 1
 * characters`, `must match pattern "\S"`) are never shown; a keyword outside this list reads
 * "is invalid", and test/errors/validation-words.test.ts fails when a route's schema uses one.
 */
export const WORDED_KEYWORDS = [
  'additionalProperties',
  'required',
  'type',
  'enum',
  'const',
  'format',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'anyOf',
] as const

/**
 * One detail per offending field: its first problem (a null enum is "must not be null", not also
 * "must be one of"). A field under `anyOf` gets one sentence for all of its branches. A query
 * parameter sent twice (`?page=1&page=2` arrives as an array) is named as such, whatever its schema.
 */
function toDetails(validate: ValidateFunction, httpPart: string | undefined): ErrorDetail[] {
  const noun = httpPart === 'querystring' ? 'parameter' : 'field'
  const errors = validate.errors ?? []
  const byField = new Map<string, ErrorDetail>()
  for (const error of errors) {
    const field = fieldOf(error)
    if (byField.has(field)) continue
    const union = errors.find((other) => other.keyword === 'anyOf' && other.instancePath === error.instancePath && error.schemaPath.startsWith(`${other.schemaPath}/`))
    let message: string
    if (httpPart === 'querystring' && error.instancePath.split('/').length === 2 && Array.isArray(error.data)) {
      message = `was given more than once; give it once`
    } else if (union !== undefined) {
      message = anyOfMessage(union, errors, noun)
    } else {
      message = messageOf(error, noun)
    }
    byField.set(field, { field, message })
  }
  return [...byField.values()]
}

function fieldOf(error: ErrorObject): string {
  const path = error.instancePath.slice(1).replaceAll('/', '.')
  const child = error.params.additionalProperty ?? error.params.missingProperty
  if (typeof child === 'string') return path === '' ? child : `${path}.${child}`
  return path === '' ? 'body' : path
}

function messageOf(error: ErrorObject, noun: string): string {
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'additionalProperties':
      return `is not a recognised ${noun}`
    case 'required':
      return 'is required'
    case 'minProperties':
      return `must contain at least ${count(params.limit as number, 'field')}`
    case 'maxProperties':
      return `must contain at most ${count(params.limit as number, 'field')}`
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`
    case 'const':
      return `must be ${String(params.allowedValue)}`
    case 'format':
      return FORMATS[params.format as keyof typeof FORMATS]?.message ?? `must be in the ${String(params.format)} format`
    case 'pattern':
      return PATTERN_MESSAGES[params.pattern as string] ?? 'is not in the expected form'
    case 'type':
      if (error.data === null) return 'must not be null'
      return `must be ${typeWords(params.type as string | string[])}`
    case 'minimum':
      return `must be >= ${String(params.limit)}`
    case 'maximum':
      return `must be <= ${String(params.limit)}`
    case 'exclusiveMinimum':
      return `must be > ${String(params.limit)}`
    case 'exclusiveMaximum':
      return `must be < ${String(params.limit)}`
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${count(params.limit as number, 'character')} long`
    case 'maxLength':
      return `must be at most ${count(params.limit as number, 'character')} long`
    case 'minItems':
      return `must list at least ${count(params.limit as number, 'item')}`
    case 'maxItems':
      return `must list at most ${count(params.limit as number, 'item')}`
    case 'uniqueItems': {
      const items = error.data as unknown[]
      return `must not list the same item twice (${JSON.stringify(items[params.j as number])} appears more than once)`
    }
    default:
      return 'is invalid'
  }
}

/**
 * One sentence for a value no branch of `anyOf` took (`Nullable(…)` is one): a branch of the
 * value's own type that refused it says why (`must be >= 1`); otherwise the branches' types
 * (`must be an integer or null`) or constants (`must be one of: pending, delivered`).
 */
function anyOfMessage(union: ErrorObject, errors: readonly ErrorObject[], noun: string): string {
  const branches = errors.filter((error) => error !== union && error.instancePath === union.instancePath && error.schemaPath.startsWith(`${union.schemaPath}/`))
  const closer = branches.find((error) => error.keyword !== 'type' && error.keyword !== 'const')
  if (closer !== undefined) return messageOf(closer, noun)
  const schemas = (union.schema ?? []) as Array<{ type?: string | string[]; const?: unknown }>
  if (schemas.length > 0 && schemas.every((schema) => schema.const !== undefined)) {
    return `must be one of: ${schemas.map((schema) => String(schema.const)).join(', ')}`
  }
  const types = schemas.flatMap((schema) => (schema.type === undefined ? [] : [schema.type].flat()))
  return types.length === 0 ? 'is invalid' : `must be ${typeWords([...new Set(types)])}`
}

/** `integer` → "an integer"; `['string', 'null']` → "a string or null"; `boolean` → "true or false". */
function typeWords(type: string | readonly string[]): string {
  const words = [type].flat().flatMap((name) => name.split(',')).map((name) => (name === 'null' ? 'null' : name === 'boolean' ? 'true or false' : article(name)))
  return words.length <= 1 ? (words[0] ?? 'valid') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`
}

/** `1, 'field'` → "one field"; `3, 'item'` → "3 items". */
function count(n: number, noun: string): string {
  return n === 1 ? `one ${noun}` : `${n} ${noun}s`
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`
}
