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

/** One detail per offending field: the first problem Ajv found (a null enum is "must not be null", not also "must be one of"). */
function toDetails(validate: ValidateFunction, httpPart: string | undefined): ErrorDetail[] {
  const noun = httpPart === 'querystring' ? 'parameter' : 'field'
  const byField = new Map<string, ErrorDetail>()
  for (const error of validate.errors ?? []) {
    const field = fieldOf(error)
    if (!byField.has(field)) byField.set(field, { field, message: messageOf(error, noun) })
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
  switch (error.keyword) {
    case 'additionalProperties':
      return `is not a recognised ${noun}`
    case 'required':
      return 'is required'
    case 'minProperties':
      return 'must contain at least one field'
    case 'enum':
      return `must be one of: ${(error.params.allowedValues as unknown[]).join(', ')}`
    case 'format':
      return FORMATS[error.params.format as keyof typeof FORMATS]?.message ?? `must match format ${error.params.format}`
    case 'type':
      if (error.data === null) return 'must not be null'
      return error.params.type === 'boolean' ? 'must be true or false' : `must be ${article(error.params.type)}`
    default:
      return error.message ?? 'is invalid'
  }
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`
}
