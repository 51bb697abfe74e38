import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { PORTAL_CSP } from '../../src/admin/portal.js'
import { ADMIN, buildAdminApp, type AdminTestApp } from './admin-app.js'

const PORTAL_DOC = readFileSync(join(process.cwd(), 'docs', 'portal.md'), 'utf8')

/** The policy docs/portal.md states: the fenced block after "served with this policy", joined into one header value. */
function documentedPolicy(): string {
  const block = /served with this policy[\s\S]*?```\n([\s\S]*?)```/.exec(PORTAL_DOC)
  expect(block, 'docs/portal.md no longer states the portal CSP in a fenced block').not.toBeNull()
  return (block?.[1] ?? '').trim().split(/\s*\n\s*/).join(' ')
}

/** A header docs/portal.md names in backticks, e.g. `X-Frame-Options: SAMEORIGIN`. */
function documentedHeader(name: string): string | undefined {
  return new RegExp(`\`${name}: ([^\`]+)\``, 'i').exec(PORTAL_DOC)?.[1]
}

/** Issue 21 item 9: the docs said `frame-ancestors 'none'` while the server sent `'self'`. */
describe('the portal headers are the ones docs/portal.md states', () => {
  let t: AdminTestApp
  beforeAll(async () => {
    t = await buildAdminApp(createMemoryAdapter(), { admin: { portal: true } })
  })
  afterAll(() => t.close())

  it.each(['/portal/', '/portal/workforce-portal.js', '/portal/favicon.svg'])('%s', async (path) => {
    const res = await t.app.inject({ method: 'GET', url: `${ADMIN}${path}` })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-security-policy']).toBe(documentedPolicy())
    expect(res.headers['content-security-policy']).toBe(PORTAL_CSP)
    expect(res.headers['x-frame-options']).toBe(documentedHeader('X-Frame-Options'))
    expect(res.headers['referrer-policy']).toBe(documentedHeader('Referrer-Policy'))
  })

  it('framing: the CSP and X-Frame-Options say the same thing (same origin only)', () => {
    const directive = /frame-ancestors ([^;]+)/.exec(documentedPolicy())?.[1]
    expect(directive).toBe("'self'")
    expect(documentedHeader('X-Frame-Options')).toBe('SAMEORIGIN')
    expect(PORTAL_DOC).not.toMatch(/frame-ancestors 'none'/)
  })
})
