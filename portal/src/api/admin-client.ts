import { IdempotencyKeys } from './idempotency-keys'

/** The header that tells the admin API a mutation comes from this page, not a cross-site form. */
const REQUESTED_WITH = 'workforce-admin'

/** One offending input of a 422 answer: `field` names a body field or query parameter. */
export interface FieldProblem {
  field: string
  message: string
}

/**
 * A failed call: the API's error envelope, or `network_error` (status 0) when no answer came.
 * A network error may hide a change that was made: retrying it is safe (same Idempotency-Key).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export interface AdminClientOptions {
  /** The admin API's prefix, e.g. `/settings/integrations/api`; '' for the origin's root. */
  base: string
  /** Sent with every request, e.g. a host's own CSRF token header (its `csrf` option). */
  headers?: Record<string, string>
  /** Called on any 401: the host's session is gone. */
  onSignedOut: () => void
}

type Query = Record<string, string | number | undefined>

export interface AdminClient {
  get<T>(path: string, query?: Query): Promise<T>
  /** A mutation: JSON body (`{}` at least), the cross-site header and an Idempotency-Key. */
  send<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: object): Promise<T>
}

export function createAdminClient({ base, headers = {}, onSignedOut }: AdminClientOptions): AdminClient {
  const root = base.replace(/\/+$/, '')
  const keys = new IdempotencyKeys()

  async function call<T>(url: string, init: RequestInit): Promise<T> {
    let response: Response
    try {
      response = await fetch(url, { credentials: 'same-origin', cache: 'no-store', ...init })
    } catch {
      throw new ApiError(0, 'network_error', 'The server could not be reached. Check your connection and try again; retrying is safe.')
    }
    if (response.status === 401) onSignedOut()
    if (!response.ok) throw await errorOf(response)
    if (response.status === 204) return undefined as T
    return (await response.json()) as T
  }

  return {
    get<T>(path: string, query: Query = {}) {
      const params = new URLSearchParams()
      for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value))
      const search = params.toString() === '' ? '' : `?${params}`
      return call<T>(`${root}${path}${search}`, { headers: { ...headers, Accept: 'application/json' } })
    },
    async send<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body: object = {}) {
      const json = JSON.stringify(body)
      const action = `${method} ${path} ${json}`
      const init: RequestInit = {
        method,
        body: json,
        headers: {
          ...headers,
          Accept: 'application/json',
          'Content-Type': 'application/json',
          'X-Requested-With': REQUESTED_WITH,
          'Idempotency-Key': keys.keyFor(action),
        },
      }
      const answer = call<T>(`${root}${path}`, init)
      // Kept only while no answer came: a retry of the same action reuses it.
      answer.then(
        () => keys.settle(action),
        (error: unknown) => {
          if (!(error instanceof ApiError && error.status === 0)) keys.settle(action)
        },
      )
      return answer
    },
  }
}

async function errorOf(response: Response): Promise<ApiError> {
  try {
    const { error } = (await response.json()) as { error?: { code?: string; message?: string; details?: FieldProblem[] } }
    if (error?.code !== undefined) return new ApiError(response.status, error.code, error.message ?? error.code, error.details ?? [])
  } catch {
    // Not our envelope (a proxy's error page, say): named by its status below.
  }
  return new ApiError(response.status, `http_${response.status}`, `The server answered ${response.status} ${response.statusText}`.trim())
}
