import type { ConformanceContext } from './context.js'
import type { Capability } from './subject.js'

/**
 * One group of conformance tests: a `describe` block of its own.
 *
 * Adding a group (the webhook outbox…) is one file in `groups/` exporting a
 * `ConformanceGroup`, plus its line in `CONFORMANCE_GROUPS`. A group that needs an optional
 * capability lists it in `requires` (and the flag goes into `ConformanceSupports`).
 */
export interface ConformanceGroup {
  /** The `describe` title, e.g. `'tenant isolation'`. */
  title: string
  /** Capabilities the group tests; it is left out when the subject declares any of them `false`. */
  requires: readonly Capability[]
  /**
   * The group reads or writes days and instants in ways a process time zone can hide (a day
   * read back through a local-midnight `Date` is right in UTC and west of it, wrong east of
   * it). It runs once under each of `DAY_TIME_ZONES`, with the process time zone (`TZ`) set
   * around the subject's creation, its fixture load and the test, instead of once in the
   * process's own zone.
   */
  timeZoneSensitive?: boolean
  /**
   * Registers the group's tests with `it` from `../harness.js`; runs at collection time (once
   * per time zone for a time-zone-sensitive group), so it must not touch the subject.
   */
  define(context: ConformanceContext): void
}
