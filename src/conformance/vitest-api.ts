/**
 * vitest, loaded once for the whole suite: every module of the suite takes `describe`, `it`,
 * `expect` and the hooks from here, never from 'vitest' directly. vitest is an optional peer
 * dependency, so a host that lacks it must get a message saying so, not a module-resolution
 * error from deep inside the package: a static import would fail before any code of ours runs,
 * hence the awaited dynamic import (the suite is published as ESM only, like vitest).
 */
type Vitest = typeof import('vitest')

/** What the host needs when vitest cannot be loaded. */
export const VITEST_MISSING =
  "fastify-workforce-api/conformance runs on vitest, which is not installed here: install it in the project that runs the suite " +
  '(npm install --save-dev vitest; vitest >= 3 is an optional peer dependency of fastify-workforce-api), then run the test file with vitest (npx vitest run).'

function isMissingModule(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((error as Error).message).includes('vitest')
}

/** Loads vitest with `load`; a missing vitest becomes `VITEST_MISSING` (with the original error as `cause`). */
export async function loadVitest(load: () => Promise<Vitest> = () => import('vitest')): Promise<Vitest> {
  try {
    return await load()
  } catch (error) {
    if (isMissingModule(error)) throw new Error(VITEST_MISSING, { cause: error })
    throw error
  }
}

const vitest = await loadVitest()

export const { afterEach, beforeEach, describe, expect, it } = vitest
