import { LRUCache } from 'lru-cache'
import type { ListVersion } from '../ports/storage.js'
import type { SerializedAnswer } from './conditional.js'

/** Bytes of answers one process keeps (their UTF-16 strings count twice their length). */
export const ANSWER_CACHE_BYTES = 32 * 1024 * 1024

/**
 * The serialized answers of list pages and by-id reads, each under the version of its
 * company's rows it was read at (docs/decisions.md, "Conditional requests and kept answers").
 * A request reads the version first (one primary-key lookup, shared by every instance through
 * the database); while it is unchanged the answer is sent, or answered 304, without the page
 * query, rendering or serialization. Any change bumps the version in its own transaction, so the next request
 * misses and reads afresh: an answer is never older than the version the request saw.
 *
 * Why a version read before the answer is a sound key: the rows are read after it, so they are
 * at that version or later; a request that reads the same version again did so before the next
 * change committed, and may be given those rows. Per process, bounded by bytes (LRU).
 */
export class AnswerCache {
  readonly #answers: LRUCache<string, SerializedAnswer>

  constructor(maxBytes = ANSWER_CACHE_BYTES) {
    this.#answers = new LRUCache<string, SerializedAnswer>({
      maxSize: maxBytes,
      sizeCalculation: (answer, key) => 2 * (answer.body.length + answer.etag.length + key.length) + 64,
    })
  }

  get(key: string): SerializedAnswer | undefined {
    return this.#answers.get(key)
  }

  set(key: string, answer: SerializedAnswer): void {
    this.#answers.set(key, answer)
  }

  /** How many answers are kept (for the cache-footprint bench and tests). */
  get size(): number {
    return this.#answers.size
  }
}

/**
 * The key of one answer: resource, company, what was asked (already validated and resolved
 * to the reader's filter, so `date_from` in the company's zone is an instant) and the version.
 */
export function answerKey(resource: string, companyId: number, question: string, version: ListVersion): string {
  return `${resource}\u0000${companyId}\u0000${question}\u0000${version.appends}.${version.updates}.${version.removals}`
}
