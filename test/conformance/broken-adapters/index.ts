/**
 * The catalogue of deliberately broken adapters: each is the in-memory reference adapter with
 * one realistic bug, and names the conformance group that must catch it.
 * `test/conformance/broken-adapters.test.ts` proves the suite catches every one.
 */
import { BROKEN_ADMIN_PORTS } from './admin.js'
import { BROKEN_KEY_AND_MODULE_PORTS } from './ports.js'
import { BROKEN_READS } from './reads.js'
import { BROKEN_REPLAYS } from './replay.js'
import { BROKEN_WRITES } from './writes.js'
import type { BrokenAdapter } from './wrap.js'

export const BROKEN_ADAPTERS: readonly BrokenAdapter[] = [...BROKEN_READS, ...BROKEN_KEY_AND_MODULE_PORTS, ...BROKEN_WRITES, ...BROKEN_ADMIN_PORTS, ...BROKEN_REPLAYS]

export { brokenSubject, type BrokenAdapter, type GroupTitle } from './wrap.js'
