import { expect } from './vitest-api.js'
import type { Storage } from '../ports/storage.js'
import { WriteConflict } from '../ports/errors.js'
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
 * The outcome a uniqueness violation must have, as failure messages name it: the class, and
 * where an adapter gets it. The plugin answers 409 for it (500 for anything else).
 */
export const CONFLICT = "a WriteConflict (import { WriteConflict } from 'fastify-workforce-api')"

/**
 * How an operation ended, as a string a failure message can show side by side with the
 * expectation: `resolved`, `CONFLICT`, or the error's name and message. An error that is named
 * `WriteConflict` but is not the package's class (an adapter's own look-alike) says so: the
 * plugin would not recognise it.
 */
export function describeOutcome(result: PromiseSettledResult<unknown>): string {
  if (result.status === 'fulfilled') return 'resolved'
  const error: unknown = result.reason
  if (error instanceof WriteConflict) return CONFLICT
  if (error instanceof DeliberateRollback) return 'DeliberateRollback'
  if (error instanceof Error && error.name === 'WriteConflict') {
    return `${error.name}: ${error.message} (an error named WriteConflict that is not the package's class, so the plugin answers 500: throw the WriteConflict imported from 'fastify-workforce-api', or a subclass of it)`
  }
  if (error instanceof Error) return `${error.name}: ${error.message}`
  return `rejected with ${String(error)}`
}

/** What an operation gave, in words: `no error (it resolved)` or the outcome. */
function gave(outcome: string): string {
  return outcome === 'resolved' ? 'no error (it resolved)' : outcome
}

export interface LabelledOutcome {
  label: string
  outcome: string
}

/**
 * Asserts that every operation threw a `WriteConflict`. The message says what was expected and
 * what came instead, once per different outcome: `expected a WriteConflict (import …) to be
 * thrown, got Error: … (the operations that got it)`.
 */
export function expectConflicts(outcomes: readonly LabelledOutcome[], what: string): void {
  const wrong = new Map<string, string[]>()
  for (const { label, outcome } of outcomes) if (outcome !== CONFLICT) wrong.set(outcome, [...(wrong.get(outcome) ?? []), label])
  const why = [...wrong].map(([outcome, labels]) => `expected ${CONFLICT} to be thrown, got ${gave(outcome)} (${labels.join('; ')})`)
  expect(
    outcomes.map(({ label, outcome }) => `${label}: ${outcome}`),
    `${what}${why.length === 0 ? '' : `: ${why.join('; and ')}`}`,
  ).toEqual(outcomes.map(({ label }) => `${label}: ${CONFLICT}`))
}

/** Asserts that of racing operations exactly one resolved and every other threw a `WriteConflict`. */
export function expectOneWinner(outcomes: readonly string[], what: string): void {
  const succeeded = outcomes.filter((outcome) => outcome === 'resolved').length
  const others = outcomes.filter((outcome) => outcome !== 'resolved' && outcome !== CONFLICT)
  const counts = new Map<string, number>()
  for (const outcome of outcomes) {
    const short = outcome === CONFLICT ? 'WriteConflict' : outcome
    counts.set(short, (counts.get(short) ?? 0) + 1)
  }
  const summary = [...counts].map(([outcome, count]) => `${count} × ${outcome}`).join(', ')
  const why = [
    ...(succeeded === 1 ? [] : [`expected exactly one to resolve, ${succeeded} did`]),
    ...[...new Set(others)].map((outcome) => `expected the others to throw ${CONFLICT}, got ${outcome}`),
  ]
  expect({ succeeded, others }, `${what}: ${summary}${why.length === 0 ? '' : ` — ${why.join('; ')}`}`).toEqual({ succeeded: 1, others: [] })
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
