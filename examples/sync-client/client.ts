import createClient, { type Client } from 'openapi-fetch'
import type { paths } from './api-types.js'
import { retryingFetch, type RetryNotice, type RetryOptions } from './retry.js'

/** The API as openapi-fetch sees it: every path, parameter and body typed from `api-types.ts`. */
export type WorkforceClient = Client<paths>

export interface ApiClientOptions {
  /** Where the host mounts the API, without `/v1`: `http://127.0.0.1:3000/api/public`. */
  baseUrl: string
  /** The API key (`owk_…`), sent as `Authorization: Bearer`: the form under which `Idempotency-Key` works (docs/api.md 5). */
  key: string
  /** Sends one attempt. Default: the global `fetch`. Tests pass one that loses responses. */
  fetch?: (request: Request) => Promise<Response>
  retry?: RetryOptions
}

/** What the client has sent so far, retries included. */
export interface RequestStats {
  requests: number
  retries: number
}

export interface ApiClient {
  api: WorkforceClient
  stats: RequestStats
}

/**
 * A typed client of the public API that authenticates every request and retries by the rules in
 * `retry.ts`.
 *
 * @example
 * const { api } = createApiClient({ baseUrl: 'http://127.0.0.1:3000/api/public', key })
 * const company = dataOf(await api.GET('/v1/company'), 'GET /v1/company').data
 */
export function createApiClient(options: ApiClientOptions): ApiClient {
  const baseUrl = checkBaseUrl(options.baseUrl)
  const stats: RequestStats = { requests: 0, retries: 0 }
  const sendOnce = options.fetch ?? ((request: Request) => fetch(request))
  const send = retryingFetch(
    (request) => {
      stats.requests++
      return sendOnce(request)
    },
    {
      ...options.retry,
      onRetry(notice: RetryNotice) {
        stats.retries++
        options.retry?.onRetry?.(notice)
      },
    },
  )
  const api = createClient<paths>({ baseUrl, fetch: send, headers: { authorization: `Bearer ${options.key}` } })
  return { api, stats }
}

/** A refusal from the API, with the envelope's `code` (docs/api.md 6). */
export class ApiError extends Error {
  override readonly name = 'ApiError'
  constructor(
    readonly what: string,
    readonly status: number,
    readonly code: string | null,
    detail: string,
  ) {
    super(`${what}: ${status}${code === null ? '' : ` ${code}`}${detail === '' ? '' : ` (${detail})`}`)
  }
}

/** A usage mistake: a bad URL or option. */
export class ClientSetupError extends Error {
  override readonly name = 'ClientSetupError'
}

/**
 * The body of a successful openapi-fetch result, or an `ApiError` naming `what` was asked.
 *
 * @example
 * const page = dataOf(await api.GET('/v1/roles', { params: { query: { page: 1 } } }), 'GET /v1/roles')
 */
export function dataOf<T>(result: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (result.response.ok && result.data !== undefined) return result.data
  const envelope = result.error as { error?: { code?: unknown; message?: unknown; details?: Array<{ field: string; message: string }> } } | undefined
  const code = typeof envelope?.error?.code === 'string' ? envelope.error.code : null
  const message = typeof envelope?.error?.message === 'string' ? envelope.error.message : result.response.statusText
  const details = (envelope?.error?.details ?? []).map((d) => `${d.field} ${d.message}`)
  throw new ApiError(what, result.response.status, code, [message, ...details].filter((part) => part !== '').join('; '))
}

function checkBaseUrl(value: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new ClientSetupError(`not a URL: ${value} (expected e.g. http://127.0.0.1:3000/api/public)`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ClientSetupError(`not an http(s) URL: ${value}`)
  if (url.search !== '' || url.hash !== '') throw new ClientSetupError(`the URL must not have a query or fragment: ${value}`)
  const path = url.pathname.replace(/\/+$/, '')
  if (path.endsWith('/v1')) throw new ClientSetupError(`give the URL without /v1: ${url.origin}${path.slice(0, -3)}`)
  return `${url.origin}${path}`
}
