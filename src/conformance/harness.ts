/**
 * How a group registers its tests. Groups call `it` from here, not from vitest: the suite
 * collects each group's tests first (`collectTests`), then hands them to vitest
 * (`describeStorageConformance`) or runs them as plain async functions (`runConformance`, which
 * the catalogue of broken adapters uses to run the suite over dozens of adapters in one test).
 * Assertions are vitest's `expect` either way.
 */

/** A test body: resolves when the adapter behaves, throws (an `AssertionError`, usually) when it does not. */
export type TestBody = () => Promise<void> | void

export interface CollectedTest {
  title: string
  body: TestBody
}

let collector: CollectedTest[] | undefined

/** Registers a test of the group being defined. Only valid inside `ConformanceGroup.define`. */
export function it(title: string, body: TestBody): void {
  if (collector === undefined) {
    throw new Error(`conformance suite bug: test "${title}" was registered outside a group's define()`)
  }
  collector.push({ title, body })
}

/** Runs `define` and returns the tests it registered, in order. */
export function collectTests(define: () => void): CollectedTest[] {
  const outer = collector
  const tests: CollectedTest[] = []
  collector = tests
  try {
    define()
  } finally {
    collector = outer
  }
  return tests
}

/**
 * What `notApplicable` throws. `describeStorageConformance` turns it into a skipped vitest test
 * that shows the reason; `runConformance` lists it apart from the failures.
 */
export class NotApplicable extends Error {
  constructor(reason: string) {
    super(reason)
    this.name = 'NotApplicable'
  }
}

/**
 * Ends the running test as not applicable to this subject: for an optional capability the
 * subject can only be asked about at run time, such as a reader's `seek`. Call it before any
 * assertion, never to hide a failure.
 */
export function notApplicable(reason: string): never {
  throw new NotApplicable(reason)
}
