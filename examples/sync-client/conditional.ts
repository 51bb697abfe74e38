import { ApiError, dataOf } from './client.js'

/**
 * Conditional requests (docs/api.md 4, "Asking again: `ETag` and `304`"): a question the client
 * asks again every run is sent with `If-None-Match` and the `ETag` of the answer it kept, and
 * while nothing changed the API answers `304 Not Modified`, without a body and without spending
 * the key's rate budget. The kept body is then the answer, handled exactly as the 200 it was.
 */

/** One question to the API: a path and its query. Its kept answer is keyed by both (`questionKey`). */
export interface Question {
  path: string
  query?: Readonly<Record<string, string | number>>
}

/** An answer kept to be asked for again: its `ETag` and its body (JSON). */
export interface KeptAnswer {
  etag: string
  body: string
}

/** Where kept answers live, keyed by `questionKey`: the mirror (`Mirror`, its `kept_answer` table). */
export interface AnswerStore {
  /** The answer kept for `key`, or null. */
  keptAnswer(key: string): KeptAnswer | null
  /** Keeps `answer` for `key`, replacing the one kept before. */
  keepAnswer(key: string, answer: KeptAnswer): void
  /** Forgets the answer kept for `key`, if any. */
  forgetAnswer(key: string): void
  /** Forgets every kept answer but those of `keys`. */
  keepOnlyAnswers(keys: readonly string[]): void
}

/** The `If-None-Match` header parameter every GET of the API takes (empty: an unconditional request). */
export type NoneMatchHeader = { 'If-None-Match'?: string }

/** What an openapi-fetch call resolves to. */
export interface FetchResult<T> {
  data?: T
  error?: unknown
  response: Response
}

/**
 * Sends a GET (`send`, given the header to add) and returns its answer's body, or throws an
 * `ApiError`. `keep` says whether a 200 is worth keeping to be asked again (default: always).
 */
export type ReadAnswer = <T>(question: Question, send: (header: NoneMatchHeader) => Promise<FetchResult<T>>, keep?: (answer: T) => boolean) => Promise<T>

/** A read asked once (a page of a big list walk): sent without `If-None-Match`, its answer not kept. */
export const readOnce: ReadAnswer = async (question, send) => dataOf(await send({}), `GET ${question.path}`)

/**
 * The key of a question's kept answer: its path and query, e.g. `/v1/roles?starting_after=0&per_page=100`.
 * Not the base URL: a tag is of the answer's bytes, so a 304 to it means those very bytes.
 */
export function questionKey(question: Question): string {
  const query = new URLSearchParams(Object.entries(question.query ?? {}).map(([name, value]): [string, string] => [name, String(value)])).toString()
  return query === '' ? question.path : `${question.path}?${query}`
}

/**
 * The reads of one sync that ask again: each sends the tag kept for its question, takes a 304 as
 * the kept body, and keeps each 200 with its tag. `finish()` then forgets the answers this run
 * neither kept nor was answered 304 for, so the store holds one row per question of the last
 * run (the company, the roles' pages, the feed's idle head) and no more.
 *
 * @example
 * const conditional = new ConditionalReads(mirror)
 * const company = await fetchCompany(client.api, conditional.read)
 * conditional.finish()
 */
export class ConditionalReads {
  readonly #store: AnswerStore
  readonly #current = new Set<string>()
  #notModified = 0

  constructor(store: AnswerStore) {
    this.#store = store
  }

  /** The answers that came back `304 Not Modified`, the kept body used in their place. */
  get notModified(): number {
    return this.#notModified
  }

  readonly read: ReadAnswer = async <T>(question: Question, send: (header: NoneMatchHeader) => Promise<FetchResult<T>>, keep: (answer: T) => boolean = () => true) => {
    const key = questionKey(question)
    const what = `GET ${question.path}`
    const kept = this.#store.keptAnswer(key)
    const result = await send(kept === null ? {} : { 'If-None-Match': kept.etag })
    if (result.response.status === 304) {
      if (kept === null) throw new ApiError(what, 304, null, 'Not Modified, to a request that sent no If-None-Match')
      this.#notModified++
      this.#current.add(key)
      return JSON.parse(kept.body) as T
    }
    const answer = dataOf(result, what)
    const etag = result.response.headers.get('etag')
    if (etag !== null && keep(answer)) {
      this.#store.keepAnswer(key, { etag, body: JSON.stringify(answer) })
      this.#current.add(key)
    } else {
      // A question not to be asked again (the feed moved on): its old answer would only linger.
      this.#store.forgetAnswer(key)
      this.#current.delete(key)
    }
    return answer
  }

  /** Forgets the answers of questions this run did not ask again (a roles page that moved, an old feed position). */
  finish(): void {
    this.#store.keepOnlyAnswers([...this.#current])
  }
}
