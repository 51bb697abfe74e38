import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { ADMIN_DOCUMENT_FILE, ADMIN_TYPES_FILE, buildAdminDocument } from '../../scripts/openapi.js'
import { ADMIN, buildAdminApp, type AdminTestApp } from './admin-app.js'

/**
 * The portal's wire types are generated from the admin API's document, as the sync client's are
 * from the public one: a schema change that is not regenerated (`npm run openapi`) fails here,
 * and a portal that reads a field the document lacks fails `tsc -p portal`. That is how the
 * `/scopes` drift (the portal read `description`, the API sent `{ scope }` only) is caught now.
 */
describe('the committed admin OpenAPI document and the portal types generated from it', () => {
  let t: AdminTestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it('is what npm run openapi writes today (run it after changing an admin route or schema)', async () => {
    expect(await buildAdminDocument()).toBe(readFileSync(ADMIN_DOCUMENT_FILE, 'utf8'))
  })

  it('is the document workforceAdmin serves', async () => {
    t = await buildAdminApp(createMemoryAdapter())
    const served = await t.app.inject({ method: 'GET', url: `${ADMIN}/openapi.json` })
    expect(`${JSON.stringify(served.json(), null, 2)}\n`).toBe(readFileSync(ADMIN_DOCUMENT_FILE, 'utf8'))
  })

  it("gives the portal's generated types (portal/src/api/admin-api-types.ts)", () => {
    const directory = mkdtempSync(join(tmpdir(), 'wfa-admin-types-'))
    try {
      const output = join(directory, 'admin-api-types.ts')
      execFileSync(process.execPath, ['node_modules/openapi-typescript/bin/cli.js', ADMIN_DOCUMENT_FILE, '--output', output], { stdio: 'pipe' })
      expect(readFileSync(output, 'utf8')).toBe(readFileSync(ADMIN_TYPES_FILE, 'utf8'))
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  })

  it('describes every scope with a description in the answer of GET /scopes', () => {
    const document = JSON.parse(readFileSync(ADMIN_DOCUMENT_FILE, 'utf8'))
    const entry = document.paths['/scopes'].get.responses['200'].content['application/json'].schema.properties.data.items.properties.scopes.items
    expect(entry.required).toEqual(['scope', 'description'])
  })
})
