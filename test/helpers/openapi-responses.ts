import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'

/**
 * Checks one HTTP response against the OpenAPI document: is this status documented for this
 * operation, are the headers the document names there present and well-formed, and does the
 * body match the documented schema? `response-checks.ts` runs it on every response the test
 * suites receive, so a response the document does not describe fails the test that got it.
 */

/** The document as committed (`npm run openapi`): what a check uses when no app serves one. */
export const COMMITTED_DOCUMENT_FILE = new URL('../../docs/openapi.json', import.meta.url)

export interface Exchange {
  method: string
  /**
   * The operation's path as the document writes it (`/v1/todos/{id}`) or as Fastify does
   * (`/v1/todos/:id`), without the server prefix. Give this or `url`.
   */
  path?: string
  /**
   * The request URL as sent (`/api/public/v1/todos/7?x=1`, or absolute): matched to a
   * template after the server prefix and the query are stripped. A URL outside the prefix
   * is not the document's business and is skipped.
   */
  url?: string
  status: number
  /** Response headers, any case; repeated ones as arrays. */
  headers: Readonly<Record<string, string | number | readonly string[] | undefined>>
  /** The raw body (string or Buffer, parsed as JSON when JSON was sent), or an already-parsed value. */
  body?: unknown
  /**
   * Set when the app mounted this method and path as an API operation (the route hook knows):
   * then a path or method the document lacks is a problem, an undocumented route. Otherwise
   * such a request is none of the document's business and is skipped (see `checkResponse`).
   */
  mounted?: boolean
}

export type OpenApiDocument = {
  servers?: Array<{ url: string }>
  paths: Record<string, Record<string, unknown>>
  [key: string]: unknown
}

/** A parsed document with its validators, compiled on first use and kept for the process. */
export interface ResponseChecker {
  readonly document: OpenApiDocument
  check(exchange: Exchange): string[]
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
const DOCUMENT_ID = 'openapi:document'

let committed: ResponseChecker | undefined
/** By the document's text: apps with the same options serve equal documents and share one checker. */
const byText = new Map<string, ResponseChecker>()
/** By identity: an app's document object is hashed once, not once per response. */
const byObject = new WeakMap<object, ResponseChecker>()

/** The checker of `document`, or of the committed `docs/openapi.json` when none is given. */
export function responseCheckerFor(document?: OpenApiDocument): ResponseChecker {
  if (document === undefined) {
    committed ??= checkerOf(JSON.parse(readFileSync(COMMITTED_DOCUMENT_FILE, 'utf8')) as OpenApiDocument)
    return committed
  }
  const known = byObject.get(document)
  if (known !== undefined) return known
  const text = JSON.stringify(document)
  const key = createHash('sha1').update(text).digest('hex')
  let checker = byText.get(key)
  if (checker === undefined) {
    // A private copy: validators must not change under us if a test mutates the app's document.
    checker = checkerOf(JSON.parse(text) as OpenApiDocument)
    byText.set(key, checker)
  }
  byObject.set(document, checker)
  return checker
}

/**
 * The problems of `exchange` against `document` (default: the committed `docs/openapi.json`);
 * empty when the response is as documented, or when it is not an API operation's response.
 *
 * What is skipped, and why:
 * - URLs outside the document's paths (the not-found handler's 404s, `/openapi.json` itself,
 *   `/docs`, the host's own routes, anything outside the server prefix): the document
 *   describes only its operations;
 * - `HEAD`: Fastify answers it from the GET route without a body; the document lists GET;
 * - a method a documented path lacks (say `DELETE /v1/users`), unless `mounted`: Fastify gives
 *   its not-found 404 there, and OpenAPI 3.1 has no place to describe an operation that does
 *   not exist. `test/errors/` holds that answer to the envelope instead.
 *
 * @example
 * checkResponse({ method: 'GET', url: '/api/public/v1/todos/7', status: 418, headers: {}, body: '{}' })
 * // → ['GET /v1/todos/{id}: status 418 is not documented (documented: 200, 401, …)']
 */
export function checkResponse(exchange: Exchange, document?: OpenApiDocument): string[] {
  return responseCheckerFor(document).check(exchange)
}

/**
 * The schemas of `document` by JSON pointer (`/components/schemas/Todo`), compiled on first use:
 * the whole document is added under one id, so each schema's `#/components/...` references
 * resolve against it.
 */
export function schemaValidators(document: object): (pointer: string) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
  addFormats(ajv)
  ajv.addSchema(document, DOCUMENT_ID)
  const validators = new Map<string, ValidateFunction>()
  return (pointer) => {
    let validate = validators.get(pointer)
    if (validate === undefined) {
      validate = ajv.getSchema(`${DOCUMENT_ID}#${encodeURI(pointer)}`)
      if (validate === undefined) throw new Error(`openapi: no schema at ${pointer}`)
      validators.set(pointer, validate)
    }
    return validate
  }
}

function checkerOf(document: OpenApiDocument): ResponseChecker {
  const validatorAt = schemaValidators(document)
  const templates = Object.keys(document.paths).map((template) => ({ template, pattern: templatePattern(template) }))
  const prefix = (document.servers?.[0]?.url ?? '').replace(/\/$/, '')

  return {
    document,
    check(exchange) {
      const method = exchange.method.toLowerCase()
      if (method === 'head') return []
      const path = exchange.url === undefined ? templatePath(exchange.path ?? '') : urlPath(exchange.url, prefix)
      if (path === undefined) return []
      const template = document.paths[path] === undefined ? templates.find((entry) => entry.pattern.test(path))?.template : path
      const label = `${exchange.method.toUpperCase()} ${template ?? path}`
      if (template === undefined) return exchange.mounted === true ? [`${label}: the path is not in the document`] : []
      const operation = document.paths[template]?.[method] as { responses?: Record<string, unknown> } | undefined
      if (operation === undefined || !METHODS.has(method)) {
        return exchange.mounted === true ? [`${label}: the operation is not in the document`] : []
      }
      const base = `/paths/${escapePointer(template)}/${method}/responses`
      const responses = operation.responses ?? {}
      const status = String(exchange.status)
      const key = [status, `${status[0]}XX`, `${status[0]}xx`, 'default'].find((candidate) => candidate in responses)
      if (key === undefined) {
        return [`${label}: status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`]
      }
      const response = resolve(document, `${base}/${escapePointer(key)}`)
      const problems = [
        ...checkHeaders(document, response, exchange.headers, validatorAt),
        ...checkBody(response, exchange, validatorAt),
      ]
      return problems.map((problem) => `${label} → ${status}: ${problem}`)
    },
  }
}

interface Located {
  value: Record<string, unknown>
  pointer: string
}

/** Follows local `$ref`s of non-schema objects (responses, headers) to what they name. */
function resolve(document: OpenApiDocument, pointer: string): Located {
  let located: Located = { value: valueAt(document, pointer), pointer }
  for (let hops = 0; typeof located.value.$ref === 'string'; hops++) {
    const ref = located.value.$ref
    if (!ref.startsWith('#/') || hops > 10) throw new Error(`openapi: cannot follow ${ref} at ${located.pointer}`)
    const next = decodeURIComponent(ref.slice(1))
    located = { value: valueAt(document, next), pointer: next }
  }
  return located
}

function valueAt(document: OpenApiDocument, pointer: string): Record<string, unknown> {
  let value: unknown = document
  for (const part of pointer.split('/').slice(1)) {
    value = (value as Record<string, unknown> | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')]
  }
  if (value === null || typeof value !== 'object') throw new Error(`openapi: nothing at ${pointer}`)
  return value as Record<string, unknown>
}

function checkHeaders(
  document: OpenApiDocument,
  response: Located,
  headers: Exchange['headers'],
  validatorAt: (pointer: string) => ValidateFunction,
): string[] {
  const given = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
  const problems: string[] = []
  for (const name of Object.keys((response.value.headers ?? {}) as object)) {
    // OpenAPI 3.1 (4.8.17.1): a `Content-Type` entry in `headers` is ignored.
    if (name.toLowerCase() === 'content-type') continue
    const header = resolve(document, `${response.pointer}/headers/${escapePointer(name)}`)
    const value = given.get(name.toLowerCase())
    if (value === undefined) {
      if (header.value.required === true) problems.push(`required header ${name} is missing`)
      continue
    }
    if (header.value.schema === undefined) continue
    const validate = validatorAt(`${header.pointer}/schema`)
    for (const one of Array.isArray(value) ? value : [value]) {
      const text = String(one)
      if (!validate(headerValue(text, header.value.schema as Record<string, unknown>))) {
        problems.push(`header ${name}: ${JSON.stringify(text)} ${describeErrors(validate.errors)}`)
      }
    }
  }
  return problems
}

/**
 * A header's text as the value its schema describes. Headers are strings on the wire; the
 * document types `Retry-After: 3` as an integer, so a decimal string becomes a number, and
 * `true`/`false` a boolean, only where the schema asks for one. Anything else stays text and
 * fails the type check, so `12abc` or `1.5` is never taken for an integer.
 */
function headerValue(text: string, schema: Record<string, unknown>): unknown {
  const types = ([] as unknown[]).concat(schema.type ?? [])
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(text)) return Number(text)
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true'
  return text
}

function checkBody(response: Located, exchange: Exchange, validatorAt: (pointer: string) => ValidateFunction): string[] {
  const raw = exchange.body
  const text = typeof raw === 'string' ? raw : Buffer.isBuffer(raw) ? raw.toString('utf8') : undefined
  const empty = raw === undefined || raw === null || text === ''
  const content = (response.value.content ?? {}) as Record<string, { schema?: unknown }>
  const mediaTypes = Object.keys(content)
  if (mediaTypes.length === 0) return empty ? [] : ['a body is not documented for this status']
  if (empty) return exchange.status === 204 ? [] : [`the body is empty; documented: ${mediaTypes.join(', ')}`]

  const contentType = headerOf(exchange.headers, 'content-type')
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase()
  const documented = mediaTypes.find((candidate) => matchesMediaType(candidate, mediaType))
  if (documented === undefined) return [`content type ${contentType ?? '(none)'} is not documented (documented: ${mediaTypes.join(', ')})`]
  if (content[documented]?.schema === undefined || !/[/+]json$/.test(documented)) return []

  let body: unknown = raw
  if (text !== undefined) {
    try {
      body = JSON.parse(text)
    } catch {
      return [`the body is not JSON: ${text.slice(0, 80)}`]
    }
  }
  const validate = validatorAt(`${response.pointer}/content/${escapePointer(documented)}/schema`)
  return validate(body) ? [] : [`the body ${describeErrors(validate.errors)}`]
}

function headerOf(headers: Exchange['headers'], name: string): string | undefined {
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1]
  return found === undefined ? undefined : String(Array.isArray(found) ? found[0] : found)
}

function matchesMediaType(documented: string, actual: string | undefined): boolean {
  if (actual === undefined) return false
  const [type, subtype] = documented.toLowerCase().split('/')
  if (type === '*') return true
  return subtype === '*' ? actual.startsWith(`${type}/`) : actual === documented.toLowerCase()
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 5)
    .map((error) => `${error.instancePath === '' ? '' : `at ${error.instancePath} `}${error.message ?? error.keyword}${paramsOf(error)}`)
    .join('; ')
}

function paramsOf(error: ErrorObject): string {
  if (error.keyword === 'additionalProperties') return `: ${String((error.params as { additionalProperty: string }).additionalProperty)}`
  if (error.keyword === 'enum') return `: ${JSON.stringify((error.params as { allowedValues: unknown }).allowedValues)}`
  return ''
}

/** Fastify's `/v1/todos/:id` as the document writes it, `/v1/todos/{id}`. */
function templatePath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')
}

/** A request URL's path under the server prefix, without origin or query; `undefined` outside it. */
function urlPath(url: string, prefix: string): string | undefined {
  const bare = url.replace(/^[a-z]+:\/\/[^/]+/i, '').split(/[?#]/)[0] ?? ''
  if (prefix === '') return bare
  return bare.startsWith(`${prefix}/`) ? bare.slice(prefix.length) : undefined
}

/** `/v1/todos/{id}` → a pattern of concrete paths: one non-empty segment per parameter. */
function templatePattern(template: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('')
  return new RegExp(`^${source}$`)
}

function escapePointer(part: string): string {
  return part.replace(/~/g, '~0').replace(/\//g, '~1')
}

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020
