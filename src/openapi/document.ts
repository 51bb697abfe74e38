import fastifySwagger from '@fastify/swagger'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { ResourceCatalogue } from '../api/catalogue.js'
import { EVENT_FEED_DOCS } from '../api/events-feed.js'
import { Pagination } from '../api/pagination.js'
import type { AnyResourceDeclaration } from '../api/resource.js'
import type { RouteSpec } from '../api/route-spec.js'
import { ErrorEnvelope } from '../errors.js'
import { COMMON_FIELD_DOCS, PARAMETER_DOCS, WEBHOOKS_TAG } from './operation-docs.js'
import { OPERATION_EXAMPLES } from './examples.generated.js'
import { ERROR_RESPONSES, errorExample, errorStatusesOf, HEADERS, IF_NONE_MATCH_PARAMETER, NOT_MODIFIED_DESCRIPTION, successHeadersOf } from './responses.js'
import { SIGNATURE_HEADERS, webhooksSection } from './webhook-payloads.js'

/** The name `@fastify/swagger` decorates the API's context with; ours, so a host's own `swagger` is untouched. */
export const DOCUMENT_DECORATOR = 'workforceApiOpenApi'

/** `info.version`: the newest release of `/v1` (spec 9.3). Releases are additive. */
export const API_RELEASE = '2026-09'

/** The document, as served at `<prefix>/openapi.json` and written to `docs/openapi.json`. */
export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, Operation>> }

interface Operation {
  operationId: string
  parameters?: Record<string, unknown>[]
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }>; required?: boolean }
  responses: Record<string, Record<string, unknown>>
  [key: string]: unknown
}

const SECURITY_SCHEMES = {
  ApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'Your API key, `owk_<key_id>_<secret>`, as created in company settings. The primary way to authenticate.',
  },
  Bearer: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'owk_<key_id>_<secret>',
    description: 'The same API key as `Authorization: Bearer <key>`. Only this form enables idempotent retries (`Idempotency-Key`).',
  },
}

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the first request runs and its response is kept for 24 hours; a retry with the same key gets that response again (`Idempotent-Replay: true`) and changes nothing twice. Active only with `Authorization: Bearer`. Use a fresh random value (a UUID) per change.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$' },
  example: '5f0c2a8e-3b1d-4c6f-9a7e-2d8b1c4e6f10',
}

export interface OpenApiSettings {
  /** The plugin's `prefix`: the document's server URL. */
  prefix: string
  /** Every route the API mounts, as declared. */
  routes: readonly RouteSpec[]
  /** The resources the routes belong to: their schemas, scopes, modules, events and prose. */
  catalogue: ResourceCatalogue
  /** Shown as `info.title`. */
  title: string
  description?: string
}

/**
 * Registers `@fastify/swagger` (dynamic mode) on the API's context, so the document is built
 * from the very schemas the routes validate and serialize with; then completes it with what
 * the corridor adds (security, error responses, headers), examples, and the webhooks.
 * Read it with `app[DOCUMENT_DECORATOR]()`.
 */
export async function registerOpenApiDocument(app: FastifyInstance, settings: OpenApiSettings): Promise<void> {
  const specs = new Map(settings.routes.map((route) => [route.operationId, route]))
  await app.register(fastifySwagger, {
    mode: 'dynamic',
    decorator: DOCUMENT_DECORATOR,
    hideUntagged: true,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: settings.title,
        version: API_RELEASE,
        description: settings.description ?? DEFAULT_DESCRIPTION,
      },
      servers: [{ url: settings.prefix === '' ? '/' : settings.prefix }],
      tags: [
        ...settings.catalogue.resources
          .filter((resource) => settings.routes.some((route) => route.tag === resource.name))
          .map((resource) => ({ name: resource.name, description: resource.docs.description })),
        WEBHOOKS_TAG,
      ],
      components: {},
    },
    transformObject: (documents) => finishDocument((documents as { openapiObject: unknown }).openapiObject as OpenApiDocument, specs, settings.catalogue) as never,
  })
}

const DEFAULT_DESCRIPTION = [
  "Your company's users, employees, roles, projects, shifts, absences, expenses and to-dos, for integrations.",
  '',
  'Authenticate every request with an API key in `X-Api-Key` (or `Authorization: Bearer`). Each operation needs one scope, and that scope’s platform module must be active for your company.',
  '',
  'Lists are ordered by id ascending and paged with `page` and `per_page` (at most 100), or walked with `starting_after`. To keep a copy, take `GET /v1/events/cursor`, read every list, then follow `GET /v1/events` from that cursor: every change in commit order, deletions included.',
  '',
  'Every error has the same envelope: `{"error":{"code","message","status","details?"}}`.',
].join('\n')

/** Completes the generated document; a pure function of it and the route declarations. */
export function finishDocument(document: OpenApiDocument, specs: ReadonlyMap<string, RouteSpec>, catalogue: ResourceCatalogue): OpenApiDocument {
  const components = (document.components ?? {}) as Record<string, Record<string, unknown>>
  components.securitySchemes = SECURITY_SCHEMES
  components.schemas = {
    ...components.schemas,
    ErrorEnvelope: plain(ErrorEnvelope),
    Pagination: plain(Pagination),
    ...Object.fromEntries(catalogue.resources.map((resource) => [resource.component, describedFields(resource, plain(resource.item))])),
  }
  components.headers = Object.fromEntries(
    Object.entries(HEADERS).map(([key, { name: _name, ...header }]) => [key, header]),
  )
  components.responses = Object.fromEntries(
    Object.entries(ERROR_RESPONSES).map(([status, response]) => [
      response.name,
      {
        description: response.description,
        headers: Object.fromEntries(response.headers.map((key) => [HEADERS[key]?.name ?? key, { $ref: `#/components/headers/${key}` }])),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' }, example: errorExample(Number(status)) } },
      },
    ]),
  )
  components.parameters = {
    'Idempotency-Key': IDEMPOTENCY_KEY_PARAMETER,
    'If-None-Match': IF_NONE_MATCH_PARAMETER,
    ...Object.fromEntries(SIGNATURE_HEADERS.map((header) => [header.name, header])),
  }
  document.components = components

  for (const [path, methods] of Object.entries(document.paths)) {
    for (const operation of Object.values(methods)) {
      const spec = specs.get(operation.operationId)
      if (spec === undefined) throw new Error(`openapi: ${path} has no route declaration (${operation.operationId})`)
      completeOperation(operation, spec, catalogue)
    }
  }

  const resourceOf = (name: string) => {
    const found = catalogue.resource(name)
    if (found === undefined) throw new Error(`openapi: no schema for the events of ${name}`)
    return { schemaRef: `#/components/schemas/${found.component}`, singular: found.singular, fields: Object.keys(found.item.properties ?? {}) }
  }
  return { ...document, webhooks: webhooksSection(catalogue.eventTypes, resourceOf) }
}

function completeOperation(operation: Operation, spec: RouteSpec, catalogue: ResourceCatalogue): void {
  const docs = catalogue.operationDocs(spec.operationId, spec.tag) ?? EVENT_FEED_DOCS[spec.operationId]
  const parameterDocs = catalogue.resource(spec.tag)?.docs.parameters
  const scope = spec.scope
  operation.description = [
    docs?.description,
    scope === undefined
      ? 'Any valid key may call it; each key sees the event types of the resources its scopes can read, for the modules active for your company.'
      : `Needs the scope \`${scope}\`; the company's \`${catalogue.moduleOf(scope)}\` module must be active.`,
  ]
    .filter((line) => line !== undefined)
    .join('\n\n')
  operation.security = scope === undefined ? [{ ApiKey: [] }, { Bearer: [] }] : [{ ApiKey: [scope] }, { Bearer: [scope] }]
  if (scope !== undefined) operation['x-required-scope'] = scope

  const parameters = operation.parameters ?? []
  for (const parameter of parameters) {
    const described = parameterDocs?.[String(parameter.name)] ?? PARAMETER_DOCS[String(parameter.name)]
    if (described !== undefined && parameter.description === undefined) parameter.description = described
  }
  if (spec.method !== 'GET') parameters.push({ $ref: '#/components/parameters/Idempotency-Key' })
  else parameters.push({ $ref: '#/components/parameters/If-None-Match' })
  if (parameters.length > 0) operation.parameters = parameters

  const example = OPERATION_EXAMPLES[spec.operationId]
  if (example?.query !== undefined) {
    for (const parameter of parameters) {
      const value = example.query[String(parameter.name)]
      if (value !== undefined && parameter.in === 'query') parameter.example = value
    }
  }
  if (example?.body !== undefined && operation.requestBody !== undefined) {
    const media = operation.requestBody.content['application/json']
    if (media !== undefined) media.example = example.body
    operation.requestBody.required = true
  }

  // Every read answers 304 to a client that holds its tag (src/api/conditional.ts).
  if (spec.method === 'GET') operation.responses['304'] = { description: NOT_MODIFIED_DESCRIPTION }
  for (const [status, response] of Object.entries(operation.responses)) {
    response.description = docs?.responses?.[Number(status)] ?? response.description
    response.headers = Object.fromEntries(
      successHeadersOf(spec, Number(status)).map((key) => [HEADERS[key]?.name ?? key, { $ref: `#/components/headers/${key}` }]),
    )
    const media = (response.content as Record<string, Record<string, unknown>> | undefined)?.['application/json']
    if (media !== undefined) {
      media.schema = referenceResource(media.schema as Record<string, unknown>, catalogue.resource(spec.tag))
      if (example?.response !== undefined && example.status === Number(status)) media.example = example.response
    }
  }
  for (const status of errorStatusesOf(spec)) {
    operation.responses[String(status)] = { $ref: `#/components/responses/${ERROR_RESPONSES[status]?.name}` }
  }
}

/**
 * The success body with its resource named: `data` (or `data.items`) becomes a `$ref` to the
 * resource's component, and `pagination` to `Pagination`, when they are exactly those
 * schemas; anything else stays inline, so the document never claims a shape the route lacks.
 */
function referenceResource(body: Record<string, unknown>, resource: AnyResourceDeclaration | undefined): Record<string, unknown> {
  const properties = body.properties as Record<string, Record<string, unknown>> | undefined
  const data = properties?.data
  if (properties === undefined || data === undefined) return body
  const item = data.type === 'array' ? (data.items as Record<string, unknown>) : data
  if (resource === undefined || !sameJson(item, resource.item)) return body
  const ref = { $ref: `#/components/schemas/${resource.component}` }
  const next: Record<string, unknown> = { ...properties, data: data.type === 'array' ? { ...data, items: ref } : ref }
  if (properties.pagination !== undefined && sameJson(properties.pagination, Pagination)) next.pagination = { $ref: '#/components/schemas/Pagination' }
  return { ...body, properties: next }
}

/** A resource's component schema with each field's meaning (its declaration's `docs.fields`, else the shared text). */
function describedFields(resource: AnyResourceDeclaration, schema: Record<string, unknown>): Record<string, unknown> {
  const properties = schema.properties as Record<string, Record<string, unknown>>
  for (const [field, property] of Object.entries(properties)) {
    const description = resource.docs.fields?.[field] ?? COMMON_FIELD_DOCS[field]
    if (description !== undefined) properties[field] = { description, ...property }
  }
  return schema
}

/** A TypeBox schema as the JSON the document holds (TypeBox's symbol keys dropped). */
function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
  )
}
