import type { Storage } from '../ports/storage.js'
import { WriteConflict } from '../ports/write-storage.js'
import { WHOLE_LIST } from './list-assertions.js'
import { LIST_RESOURCES, readerOf } from './resources.js'

/** The error a test's `work` throws on purpose, to make the transaction roll back. */
export class DeliberateRollback extends Error {
  constructor() {
    super('conformance suite: deliberate failure to roll the transaction back')
    this.name = 'DeliberateRollback'
  }
}

/**
 * How an operation ended, as a string a failure message can show side by side with the
 * expectation: `resolved`, `WriteConflict`, or the error's name and message.
 */
export function describeOutcome(result: PromiseSettledResult<unknown>): string {
  if (result.status === 'fulfilled') return 'resolved'
  const error: unknown = result.reason
  if (error instanceof WriteConflict) return 'WriteConflict'
  if (error instanceof DeliberateRollback) return 'DeliberateRollback'
  if (error instanceof Error) return `${error.name}: ${error.message}`
  return `rejected with ${String(error)}`
}

/** Awaits `operation` and describes how it ended (see `describeOutcome`). */
export async function outcomeOf(operation: Promise<unknown>): Promise<string> {
  const [result] = await Promise.allSettled([operation])
  return describeOutcome(result as PromiseSettledResult<unknown>)
}

/** Lets other pending work run (another transaction's queries) before going on. */
export function pause(ms = 1): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Everything the read port shows of the companies: every list, whole, and the company.
 * Two snapshots are equal when no committed write is visible between them.
 */
export async function storageSnapshot(storage: Storage, companyIds: readonly number[]): Promise<Record<string, unknown>> {
  const snapshot: Record<string, unknown> = {}
  for (const companyId of companyIds) {
    snapshot[`company(${companyId})`] = await storage.company(companyId)
    for (const resource of LIST_RESOURCES) {
      snapshot[`${resource} of company ${companyId}`] = await readerOf(storage, resource).list(companyId, {}, WHOLE_LIST)
    }
  }
  return snapshot
}
