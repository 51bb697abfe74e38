import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { memoryFactory, sqliteFactory } from './admin-app.js'
import { defineKeyInstantsSuite } from './key-instants-suite.js'

const dir = mkdtempSync(join(tmpdir(), 'wfa-key-instants-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

for (const transport of ['inject', 'http'] as const) {
  defineKeyInstantsSuite(memoryFactory(), transport)
  defineKeyInstantsSuite(sqliteFactory(() => dir), transport)
}
