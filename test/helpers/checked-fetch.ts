import { checkResponse, type Exchange } from './openapi-responses.js'
import { recordResponseProblem } from './response-problems.js'

/**
 * Checks a response received from an API that no hook of ours watches (another process, or
 * `serve()`'s own app), against the committed `docs/openapi.json`; a problem fails the test as
 * `withResponseChecks` would. `url` is the request URL as sent.
 */
export function checkReceived(exchange: Exchange & { url: string }): void {
  for (const problem of checkResponse(exchange)) {
    recordResponseProblem({ method: exchange.method, url: exchange.url, status: exchange.status, problem })
  }
}

/**
 * `fetch` for an API served by another process (`workforce-api serve`, a fixture server), with
 * its response checked by `checkReceived`. The body is read from a clone, so the caller reads
 * the response as usual.
 */
export async function checkedFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  const response = await fetch(url, init)
  const method = init?.method ?? 'GET'
  const target = new URL(url)
  checkReceived({
    method,
    url: `${target.pathname}${target.search}`,
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: method === 'HEAD' ? undefined : await response.clone().text(),
  })
  return response
}
