// A CommonJS TypeScript host (require conditions), compiled against the packed .d.cts files:
// strict, skipLibCheck false, under node16, nodenext and node10 resolution (typesVersions).
import Fastify from 'fastify'
import workforceApi, { portsOf, type WorkforceApiOptions, type WriteStorage } from 'fastify-workforce-api'
import { createMemoryAdapter } from 'fastify-workforce-api/memory'
// The suite itself is ESM only; its types resolve for a CommonJS-mode test file, which vitest
// loads as ESM anyway.
import type { ConformanceOptions } from 'fastify-workforce-api/conformance'

export async function start(): Promise<string> {
  const app = Fastify()
  const adapter = createMemoryAdapter()
  const writes: WriteStorage = adapter.writes
  await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter), writes })
  // @ts-expect-error 'todos:wrte' is not a scope
  await app.workforceApi.keys.create({ companyId: 1, scopes: ['todos:wrte'] })
  return (await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })).key
}

// @ts-expect-error `prefx` is not an option
export const typo: WorkforceApiOptions = { ...portsOf(createMemoryAdapter()), prefx: '/api/public' }
export type { ConformanceOptions }
