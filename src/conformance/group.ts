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
  /** Registers the group's tests with `it`; runs at collection time, so it must not touch the subject. */
  define(context: ConformanceContext): void
}
