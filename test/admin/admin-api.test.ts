import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import { memoryFactory, sqliteFactory } from './admin-app.js'
import { defineAdminApiSuite } from './admin-suite.js'

const dir = mkdtempSync(join(tmpdir(), 'wfa-admin-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

defineAdminApiSuite(memoryFactory())
defineAdminApiSuite(sqliteFactory(() => dir))
defineAdminApiSuite(memoryFactory(), 'http')
defineAdminApiSuite(sqliteFactory(() => dir), 'http')
