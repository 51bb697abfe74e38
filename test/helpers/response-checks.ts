import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse, onSendHookHandler } from 'fastify'
import { routeSpecOf } from '../../src/api/route-spec.js'
import { DOCUMENT_DECORATOR } from '../../src/openapi/document.js'
import { responseCheckerFor, type Exchange, type OpenApiDocument } from './openapi-responses.js'
import { recordResponseProblem } from './response-problems.js'

const CHECKED_APP = Symbol.for('workforce-api.test.response-checks')

/** Raw responses the route hook has checked, so the raw-level pass below does not check them twice. */
const checkedByRoute = new WeakSet<object>()

/**
 * Checks every response of an API operation that `app` sends (to `app.inject` and to real
 * HTTP alike) against the OpenAPI document the app itself serves, or `docs/openapi.json` when
 * it serves none (`openapi: false`). Problems are recorded, not thrown: a throwing `onSend`
 * hook would turn the response into a 500 and hide what was wrong. `openapi-setup.ts` then
 * fails the test. `build()` and `buildWriteApp()` call it; a test that builds its own app
 * calls it before `app.ready()` (hooks added later to a parent reach the plugin's contexts too).
 *
 * Two passes, because not every response reaches a hook:
 * - `onSend`, for each response of a route declared through `mountRoute` (its config carries
 *   the `RouteSpec`, so the operation is the route Fastify chose, not a guess from the URL);
 * - at the raw response, for the rest: Fastify answers a malformed URL or an overlong path
 *   parameter from its router (`frameworkErrors`), before any route or hook. These are matched
 *   to an operation by method and URL in the document the app serves; what matches none (the
 *   not-found handler's answers, `/openapi.json`, `/docs`, the host's routes) is skipped.
 *
 * What Node's HTTP parser answers itself (`clientErrorHandler`: unparsable requests, headers
 * too large, timeouts) is written to the socket before any request exists, so neither pass sees it.
 *
 * @example
 * const app = withResponseChecks(Fastify())
 * await app.register(workforceApi, { prefix: '/api/public', ...ports })
 */
export function withResponseChecks<T extends FastifyInstance>(app: T): T {
  const marked = app as unknown as Record<symbol, boolean>
  if (marked[CHECKED_APP] === true) return app
  marked[CHECKED_APP] = true

  // The API's context holds the document; the route-less pass needs it from outside that context.
  let served: (() => OpenApiDocument | undefined) | undefined
  app.addHook('onRoute', function (this: FastifyInstance, route) {
    if (served === undefined && routeSpecOf(route) !== undefined) served = servedDocumentOf(this)
  })

  const onSend: onSendHookHandler = (request, reply, payload, done) => {
    const spec = request.routeOptions.config?.workforceRoute
    if (spec !== undefined) {
      checkedByRoute.add(reply.raw)
      // Added after the plugin registered its routes: no `onRoute` call reached us.
      served ??= servedDocumentOf(request.server)
      // HEAD is answered from the GET route, without a body; the document lists GET.
      if (request.method !== 'HEAD') {
        check({ method: spec.method, path: spec.url, mounted: true, status: reply.statusCode, headers: reply.getHeaders(), body: payload }, request.url, () =>
          servedDocumentOf(request.server)(),
        )
      }
    }
    done(null, payload)
  }
  app.addHook('onSend', onSend)

  const unrouted = (method: string, url: string, status: number, headers: Exchange['headers'], body: unknown) => {
    let document: OpenApiDocument | undefined
    try {
      document = served?.()
    } catch (error) {
      recordResponseProblem({ method, url, status, problem: `the app's document could not be built: ${(error as Error).message}` })
      return
    }
    // Without a served document we cannot know which operations this app has (a read-only
    // app lacks the writes of docs/openapi.json), so an answer outside any route is left alone.
    if (document !== undefined) check({ method, url, status, headers, body }, url, () => document)
  }

  const inject = app.inject.bind(app) as (options: InjectOptions | string) => Promise<LightMyRequestResponse>
  ;(app as unknown as { inject: unknown }).inject = (options: InjectOptions | string, callback?: unknown) => {
    if (callback !== undefined || options === undefined) return (inject as (...args: unknown[]) => unknown)(options, callback)
    return inject(options).then((response) => {
      if (!checkedByRoute.has(response.raw.res)) {
        unrouted(response.raw.req.method ?? 'GET', response.raw.req.url ?? '/', response.statusCode, response.headers, response.rawPayload)
      }
      return response
    })
  }

  // Real HTTP: listen first, so the body is captured before Fastify's handler writes it.
  // Checked when the response ends, not on 'finish', which a client in this process may outrun.
  app.server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    captureResponse(response, (headers, body) => {
      if (!checkedByRoute.has(response)) unrouted(request.method ?? 'GET', request.url ?? '/', response.statusCode, headers, body)
    })
  })
  return app
}

function check(exchange: Exchange, url: string, documentOf: () => OpenApiDocument | undefined): void {
  const record = (problem: string) => recordResponseProblem({ method: exchange.method, url, status: exchange.status, problem })
  try {
    for (const problem of responseCheckerFor(documentOf()).check(exchange)) record(problem)
  } catch (error) {
    record(`the response could not be checked: ${(error as Error).message}`)
  }
}

/**
 * Hands `ended` what `response` sent once it ends: its headers, including those passed straight
 * to `writeHead` (as Fastify does), which `getHeaders()` never sees, and its body.
 */
export function captureResponse(response: ServerResponse, ended: (headers: Exchange['headers'], body: Buffer) => void): void {
  const chunks: Buffer[] = []
  let given: Record<string, unknown> = {}
  const keep = (chunk: unknown) => {
    if (typeof chunk === 'string' || chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk))
  }
  const writeHead = response.writeHead.bind(response) as (...args: unknown[]) => ServerResponse
  const write = response.write.bind(response) as (...args: unknown[]) => boolean
  const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse
  response.writeHead = ((status: number, ...rest: unknown[]) => {
    const headers = rest.find((arg) => arg !== null && typeof arg === 'object')
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2) given[String(headers[i]).toLowerCase()] = headers[i + 1]
    } else if (headers !== undefined) {
      given = { ...given, ...Object.fromEntries(Object.entries(headers as object).map(([name, value]) => [name.toLowerCase(), value])) }
    }
    return writeHead(status, ...rest)
  }) as typeof response.writeHead
  response.write = ((chunk: unknown, ...rest: unknown[]) => (keep(chunk), write(chunk, ...rest))) as typeof response.write
  response.end = ((chunk?: unknown, ...rest: unknown[]) => {
    keep(chunk)
    const result = end(chunk, ...rest)
    ended({ ...(response.getHeaders() as Exchange['headers']), ...(given as Exchange['headers']) }, Buffer.concat(chunks))
    return result
  }) as typeof response.end
}

/** The document `@fastify/swagger` serves from the API's context, or `undefined` with `openapi: false`. */
function servedDocumentOf(context: FastifyInstance): () => OpenApiDocument | undefined {
  return () => {
    const serve = (context as unknown as Record<string, unknown>)[DOCUMENT_DECORATOR]
    return typeof serve === 'function' ? (serve as () => OpenApiDocument)() : undefined
  }
}
