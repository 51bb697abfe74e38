import { setTimeout as sleep } from 'node:timers/promises'

/*
 * Bounded HTTP load and idempotent retries for the outage tests: every loop stops at a
 * deadline and a request count, and every request is aborted after `REQUEST_ABORT_MS`, so a
 * hang shows up as a failed assertion, never as a stuck test.
 */

/** A request still unanswered after this long is recorded as a hang (status 0). */
export const REQUEST_ABORT_MS = 5_000

export interface Answer {
  /** ms since the load started */
  start: number
  end: number
  /** HTTP status, or 0 if the request was aborted or failed at the socket */
  status: number
  retryAfter: string | null
  code: string | null
}

export interface LoadOptions {
  url: string
  headers: Record<string, string>
  concurrency: number
  /** The load stops issuing requests once this many ms have passed, or `stop()` is called. */
  durationMs: number
  /** Upper bound on requests issued, whatever the duration. */
  maxRequests: number
  /** Each client's pause between two requests, so the healthy phases do not eat the CPU. */
  pauseMs: number
}

export interface Load {
  /** `performance.now()` when the load started: `start`/`end` are relative to it. */
  readonly t0: number
  now(): number
  stop(): void
  done: Promise<Answer[]>
}

/** `concurrency` clients, each issuing GET `url` back to back. */
export function startLoad(options: LoadOptions): Load {
  const t0 = performance.now()
  const now = () => performance.now() - t0
  const answers: Answer[] = []
  let stopped = false
  let issued = 0
  const worker = async () => {
    while (!stopped && now() < options.durationMs && issued < options.maxRequests) {
      issued++
      answers.push((await timedRequest(options.url, { headers: options.headers }, now)).answer)
      await sleep(options.pauseMs)
    }
  }
  const done = Promise.all(Array.from({ length: options.concurrency }, worker)).then(() => answers.sort((a, b) => a.start - b.start))
  return {
    t0,
    now,
    stop: () => {
      stopped = true
    },
    done,
  }
}

/** One request, timed; its body too, for the caller that needs it. */
export async function timedRequest(url: string, init: RequestInit, now: () => number): Promise<{ answer: Answer; body: string | null }> {
  const start = now()
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_ABORT_MS) })
    const body = await response.text()
    let code: string | null = null
    try {
      code = (JSON.parse(body) as { error?: { code?: string } }).error?.code ?? null
    } catch {
      // Not JSON: the assertions on the status say enough.
    }
    return { answer: { start, end: now(), status: response.status, retryAfter: response.headers.get('retry-after'), code }, body }
  } catch {
    return { answer: { start, end: now(), status: 0, retryAfter: null, code: null }, body: null }
  }
}

/**
 * Answers to requests that were waiting on the database while it could not answer: how long
 * each took counted from whichever came later, its own start or the outage's.
 */
export function outageAnswers(answers: Answer[], outageStart: number, outageEnd: number): Array<Answer & { wait: number }> {
  return answers
    .filter((answer) => answer.end > outageStart && answer.start < outageEnd)
    .map((answer) => ({ ...answer, wait: answer.end - Math.max(answer.start, outageStart) }))
}

/**
 * When the API was healthy again: the start of the first request after `since` from which
 * every later request answered 200; null if the last one still failed.
 */
export function recoveredAt(answers: Answer[], since: number): number | null {
  const after = answers.filter((answer) => answer.start >= since)
  let recovered: number | null = null
  for (const answer of after) {
    if (answer.status !== 200) recovered = null
    else recovered ??= answer.start
  }
  return recovered
}

export interface RetriedCreate {
  attempts: Answer[]
  /** The answer that finally succeeded (201, first or replayed), or null if none did in time. */
  success: Answer | null
  body: string | null
}

/**
 * A client that POSTs one to-do with an `Idempotency-Key` and retries, waiting `Retry-After`
 * (or `pauseMs`) between attempts, until it gets a 201 — at most `maxAttempts` times and
 * until `deadlineMs`.
 */
export async function createUntilSucceeded(options: {
  url: string
  apiKey: string
  idempotencyKey: string
  body: unknown
  now: () => number
  deadlineMs: number
  maxAttempts: number
  pauseMs: number
}): Promise<RetriedCreate> {
  const attempts: Answer[] = []
  const init: RequestInit = {
    method: 'POST',
    headers: { authorization: `Bearer ${options.apiKey}`, 'idempotency-key': options.idempotencyKey, 'content-type': 'application/json' },
    body: JSON.stringify(options.body),
  }
  while (attempts.length < options.maxAttempts && options.now() < options.deadlineMs) {
    const start = options.now()
    const response = await timedRequest(options.url, init, options.now)
    attempts.push(response.answer)
    if (response.answer.status === 201) return { attempts, success: response.answer, body: response.body }
    const retryAfterMs = response.answer.retryAfter === null ? options.pauseMs : Math.min(Number(response.answer.retryAfter) * 1000, options.pauseMs)
    const wait = Math.max(0, start + retryAfterMs - options.now())
    await sleep(wait)
  }
  return { attempts, success: null, body: null }
}

export interface WriterResult {
  title: string
  retried: RetriedCreate
}

/**
 * `count` clients, each creating to-dos one after another (a fresh title and key each),
 * retrying each until it succeeds, until `untilMs`: writes in flight at every moment of an
 * outage, some with their COMMIT on the wire when it starts.
 */
export async function startWriters(options: {
  count: number
  url: string
  apiKey: string
  prefix: string
  now: () => number
  untilMs: number
  maxPerWriter: number
}): Promise<WriterResult[]> {
  const results: WriterResult[] = []
  const writer = async (w: number) => {
    for (let n = 0; n < options.maxPerWriter && options.now() < options.untilMs; n++) {
      const title = `${options.prefix}-${w}-${n}`
      const retried = await createUntilSucceeded({
        url: options.url,
        apiKey: options.apiKey,
        idempotencyKey: title,
        body: { title, list_id: 1, assignee_group_id: 1 },
        now: options.now,
        deadlineMs: options.untilMs,
        maxAttempts: 100,
        pauseMs: 200,
      })
      results.push({ title, retried })
      if (retried.success === null) return
    }
  }
  await Promise.all(Array.from({ length: options.count }, (_, w) => writer(w)))
  return results
}
