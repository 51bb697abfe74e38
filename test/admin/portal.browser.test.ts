import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteAdapter, type SqliteAdapter } from '../../adapters/sqlite/index.js'
import { workforceAdmin } from '../../src/admin/plugin.js'
import { PORTAL_CSP } from '../../src/admin/portal.js'
import { portsOf } from '../../src/ports/index.js'
import { workforceApi } from '../../src/plugin.js'
import { defineResource } from '../../src/api/resource.js'
import { Id, Timestamp } from '../../src/api/wire.js'
import { Type } from '@sinclair/typebox'
import { seedDataset } from '../helpers/build.js'
import { exclusiveMemberIds, listIds } from '../helpers/seed-facts.js'
import { CHROMIUM_ARGS, chromiumPath, collectPageErrors, describeBrowser } from '../helpers/browser.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'

/** Screenshots of each screen, kept for a human to look at (not committed). */
const OUTPUT = join(process.cwd(), 'test-results', 'portal')
const ADMIN = '/settings/integrations/api'
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** A host's own resource (docs/extending.md): the portal offers its scope and events like ours. */
const teams = defineResource({
  name: 'teams',
  singular: 'team',
  component: 'Team',
  module: 'teams',
  scope: 'teams:read',
  item: Type.Object({ id: Id, name: Type.String(), updated_at: Timestamp }),
  render: (team: { id: number; name: string; updated_at: Date }) => ({ id: team.id, name: team.name, updated_at: team.updated_at.toISOString() }),
  list: {
    filters: {},
    reader: () => ({ list: async () => ({ rows: [], total: 0 }), get: async () => null }),
    toFilter: () => ({}),
  },
  events: { actions: ['created', 'updated', 'deleted'] },
  docs: { description: 'Teams of your company.' },
})

/**
 * The portal in Debian's Chromium over a real server: SQLite, the real dispatcher delivering to
 * a receiver on 127.0.0.1, the portal's own CSP enforced. The host's session is a cookie here.
 */
describeBrowser('the integrations portal in a real browser', () => {
  let dir: string
  let adapter: SqliteAdapter
  let app: FastifyInstance
  let receiver: Receiver
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let base: string
  let revokedKeyId = ''
  const errors: string[] = []
  const elsewhere: string[] = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wfa-portal-'))
    mkdirSync(OUTPUT, { recursive: true })
    adapter = await openSqliteAdapter({ filename: join(dir, 'portal.db') })
    await adapter.loadDataset(seedDataset())
    receiver = await startReceiver()
    app = Fastify()
    await app.register(workforceApi, {
      prefix: '/api/public',
      ...portsOf(adapter),
      resources: [teams],
      rateLimit: false,
      // One failure pauses an endpoint, so the Webhooks screen's health entry can be seen at once.
      webhookOptions: { secretKey: randomBytes(32).toString('base64'), allowPrivateDestinations: true, pollIntervalMs: 100, breakerThreshold: 1 },
    })
    await app.register(workforceAdmin, {
      prefix: ADMIN,
      portal: true,
      authorize: (request) => (/(?:^|;\s*)session=ada(?:;|$)/.test(request.headers.cookie ?? '') ? { companyId: 1, actor: { id: 'u-ada', name: 'Ada Admin' } } : null),
    })
    await adapter.modules.setActive(1, 'teams', true)
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()
    if (address === null || typeof address === 'string') throw new Error('no address')
    base = `http://127.0.0.1:${address.port}`
    browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS })
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    await context.addCookies([{ name: 'session', value: 'ada', url: base }])
    page = await context.newPage()
    // Offline proof: any request that leaves this server is refused and remembered.
    await page.route('**/*', (route) => {
      const url = route.request().url()
      if (url.startsWith(base) || url.startsWith('data:')) return route.continue()
      elsewhere.push(url)
      return route.abort()
    })
    collectPageErrors(page, errors)
  })

  afterAll(async () => {
    await browser?.close()
    await app?.close()
    await receiver?.close()
    await adapter?.close()
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  })

  const byTestId = (id: string) => page.locator(`[data-testid="${id}"]`)
  const shoot = (name: string) => page.screenshot({ path: join(OUTPUT, `${name}.png`), fullPage: true })
  const publicCall = (key: string) => fetch(`${base}/api/public/v1/users?per_page=1`, { headers: { authorization: `Bearer ${key}` } }).then((res) => res.status)
  /** The same read twice, the second with the first's tag: the status of the second. */
  const conditionalCall = async (key: string) => {
    const url = `${base}/api/public/v1/users?per_page=1`
    const first = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
    await first.arrayBuffer()
    const etag = first.headers.get('etag') ?? 'no ETag'
    return fetch(url, { headers: { authorization: `Bearer ${key}`, 'if-none-match': etag } }).then((res) => res.status)
  }

  describe('keys', () => {
    it('creates a key, shows it once, the key works; revoked after confirming, the next call is refused', async () => {
      const response = await page.goto(`${base}${ADMIN}/portal/`, { waitUntil: 'load' })
      expect(response?.headers()['content-security-policy']).toBe(PORTAL_CSP)
      await byTestId('tab-keys').click()
      await byTestId('create-key').click()
      await byTestId('key-name').fill('CRM sync')
      await byTestId('scope-users:read').check()
      // Regression: GET /scopes answered { scope } only, and every hint beside a scope was empty.
      expect(await page.locator('label.check', { has: byTestId('scope-users:read') }).locator('.hint').textContent()).toBe('List users, get one user')
      await byTestId('submit-key').click()
      const plaintext = (await byTestId('new-key-plaintext').inputValue({ timeout: 10_000 })).trim()
      expect(plaintext).toMatch(/^owk_[0-9a-f]{16}_/)
      await expect.poll(() => page.getByText(/only time it is shown/i).count()).toBeGreaterThan(0)
      await shoot('01-key-created')
      expect(await publicCall(plaintext)).toBe(200)
      // Shown on the usage screen as one more request and one 304 (issue 25).
      expect(await conditionalCall(plaintext)).toBe(304)

      // Read once: after dismissing, the plaintext is nowhere on the page, and no API answer holds it.
      await byTestId('dismiss-secret').click()
      await expect.poll(() => page.content()).not.toContain(plaintext)
      const keyId = plaintext.split('_')[1] as string
      revokedKeyId = keyId
      await byTestId(`revoke-key-${keyId}`).click()
      await byTestId('confirm').click()
      await expect.poll(() => byTestId(`key-row-${keyId}`).textContent(), { timeout: 10_000 }).toMatch(/revoked/i)
      expect(await publicCall(plaintext)).toBe(401)
      await shoot('02-keys')
    })
  })

  describe("a host's own resource", () => {
    it('is offered in the key form (its scope, described by its routes) and in the endpoint form (its events)', async () => {
      try {
        await page.goto(`${base}${ADMIN}/portal/`, { waitUntil: 'load' })
        await byTestId('tab-keys').click()
        await byTestId('create-key').click()
        expect(await page.locator('label.check', { has: byTestId('scope-teams:read') }).locator('.hint').textContent()).toBe('List teams, get one team')
        await page.goto(`${base}${ADMIN}/portal/`, { waitUntil: 'load' })
        await byTestId('tab-webhooks').click()
        await byTestId('create-endpoint').click()
        // The picker renders once the event types have loaded.
        for (const type of ['teams.created', 'teams.updated', 'teams.deleted']) {
          await expect.poll(() => byTestId(`event-${type}`).count(), { timeout: 10_000 }).toBe(1)
        }
        await shoot('00-host-resource')
      } finally {
        // The next tests start from a fresh page, as a user opening the portal would.
        await page.goto(`${base}${ADMIN}/portal/`, { waitUntil: 'load' })
      }
    })
  })

  describe('webhooks and deliveries', () => {
    it('creates an endpoint at a local receiver, sends a test event, sees the attempt, redelivers it', async () => {
      await byTestId('tab-webhooks').click()
      await byTestId('create-endpoint').click()
      await byTestId('endpoint-url').fill(receiver.url)
      await byTestId('endpoint-description').fill('Local receiver')
      await byTestId('event-all').check()
      await byTestId('submit-endpoint').click()
      const secret = (await byTestId('endpoint-secret').inputValue({ timeout: 10_000 })).trim()
      expect(secret).toMatch(/^whsec_/)
      await shoot('03-endpoint-created')
      await byTestId('dismiss-secret').click()
      const row = page.locator('[data-testid^="endpoint-we_"]').first()
      const endpointId = ((await row.getAttribute('data-testid')) as string).replace('endpoint-', '')

      await byTestId(`send-test-${endpointId}`).click()
      const [delivered] = await receiver.waitFor(1, 10_000)
      const event = JSON.parse(delivered!.body) as { id: string; type: string }
      expect(event.type).toBe('webhook.test')
      expect(delivered!.headers['webhook-id']).toBe(event.id)

      await byTestId(`deliveries-${endpointId}`).click()
      const delivery = page.locator(`[data-testid="delivery-row"][data-event-id="${event.id}"]`)
      await expect.poll(async () => (await delivery.count()) > 0 && /delivered/i.test((await delivery.first().textContent()) ?? ''), { timeout: 15_000, interval: 250 }).toBe(true)
      await byTestId(`delivery-details-${event.id}`).click()
      await expect.poll(() => page.locator('.delivery-details').first().innerText(), { timeout: 10_000 }).toMatch(/204/)
      await byTestId(`payload-${event.id}`).click()
      await expect.poll(() => byTestId('payload').textContent()).toContain(event.id)
      await shoot('04-deliveries')

      await byTestId(`redeliver-${event.id}`).click()
      const again = await receiver.waitFor(2, 10_000)
      expect(again[1]!.headers['webhook-id']).toBe(event.id)
    })

    it('replays a period to an endpoint added late: the event it missed arrives, with its own id', async () => {
      const late = await startReceiver()
      try {
        const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'], expiresAt: null, name: null })
        const todo = { title: 'Replayed from the portal', list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] }
        const created = await fetch(`${base}/api/public/v1/todos`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(todo) })
        expect(created.status).toBe(201)
        const { endpoint } = await app.workforceApi.webhooks.create({ companyId: 1, url: late.url, events: ['todos.created'], description: 'Added late' })
        // The delivery log loads its endpoints when it opens.
        await byTestId('tab-webhooks').click()
        await byTestId('tab-deliveries').click()
        await byTestId('delivery-endpoint').selectOption(endpoint.id)
        // The form's period is the last day, up to the next minute.
        await byTestId('replay-submit').click()
        const [missed] = await late.waitFor(1, 10_000)
        const body = JSON.parse(missed!.body) as { id: string; type: string; data: { title: string } }
        expect(body).toMatchObject({ type: 'todos.created', data: { title: 'Replayed from the portal' } })
        expect(missed!.headers['webhook-id']).toBe(body.id)
        await expect.poll(() => page.locator(`[data-testid="delivery-row"][data-event-id="${body.id}"]`).count(), { timeout: 10_000 }).toBe(1)
        await shoot('04c-replayed')
      } finally {
        await late.close()
      }
    })

    it('says that a failing endpoint is paused, and until when, before it is disabled', async () => {
      const failing = await startReceiver()
      failing.answer = () => ({ status: 500 })
      try {
        const { endpoint } = await app.workforceApi.webhooks.create({ companyId: 1, url: failing.url, events: ['*'], description: 'Broken receiver' })
        await app.workforceApi.webhooks.sendTest(endpoint.id)
        await failing.waitFor(1, 10_000)
        await expect.poll(async () => (await app.workforceApi.webhooks.get(endpoint.id)).paused_until !== null, { timeout: 10_000 }).toBe(true)
        // The list is loaded when the screen opens.
        await byTestId('tab-keys').click()
        await byTestId('tab-webhooks').click()
        const health = byTestId(`endpoint-health-${endpoint.id}`)
        await expect.poll(async () => (await health.count()) > 0 && ((await health.textContent()) ?? ''), { timeout: 10_000 }).toMatch(/failing since .*paused until/i)
        await shoot('04b-endpoint-paused')
        await byTestId(`delete-endpoint-${endpoint.id}`).click()
        await byTestId('confirm').click()
        await expect.poll(() => byTestId(`endpoint-${endpoint.id}`).count(), { timeout: 10_000 }).toBe(0)
      } finally {
        await failing.close()
      }
    })
  })

  describe('audit and usage', () => {
    it('lists every change with who made it, and the usage of the revoked key', async () => {
      await byTestId('tab-audit').click()
      await expect.poll(() => byTestId('audit-row').count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(4)
      const rows = (await byTestId('audit-row').allInnerTexts()).join('\n')
      expect(rows).toContain('Ada Admin')
      expect(rows).toContain(revokedKeyId)
      await shoot('05-audit')
      await byTestId('tab-usage').click()
      // The key's three accepted requests, one of them a 304 (the 401 after revoking has no key to
      // count), reach the store on the meter's next flush, every 5 s. The numbers: requests, 304,
      // 4xx, 5xx, 429.
      await expect
        .poll(
          async () => {
            await byTestId('refresh-usage').click()
            const row = byTestId(`usage-row-${revokedKeyId}`)
            return (await row.count()) === 0 ? [] : row.locator('td.number').allInnerTexts()
          },
          { timeout: 15_000, interval: 1_000 },
        )
        .toEqual(['3', '1', '0', '0', '0'])
      await shoot('06-usage')
      expect(elsewhere).toEqual([])
      // The 401 a revoked key got was from Node's fetch, not the page: the page logged no error.
      expect(errors).toEqual([])
    })
  })

  describe('accessibility', () => {
    it('has no serious or critical axe violations on any screen', async () => {
      // axe is injected as a script, which the portal's CSP rightly forbids: this context bypasses it.
      const axeContext = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } })
      await axeContext.addCookies([{ name: 'session', value: 'ada', url: base }])
      const axePage = await axeContext.newPage()
      await axePage.goto(`${base}${ADMIN}/portal/`, { waitUntil: 'load' })
      await axePage.addScriptTag({ content: AXE_SOURCE })
      const found: string[] = []
      for (const tab of ['tab-keys', 'tab-webhooks', 'tab-deliveries', 'tab-audit', 'tab-usage']) {
        await axePage.locator(`[data-testid="${tab}"]`).click()
        await axePage.waitForTimeout(300)
        const violations = (await axePage.evaluate(async () => {
          // Runs in the page: its globals are the browser's.
          const page = globalThis as unknown as { document: unknown; axe: { run(context: unknown, options: unknown): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }
          const result = await page.axe.run(page.document, {
            resultTypes: ['violations'],
          })
          return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }))
        })) as Array<{ id: string; impact: string; nodes: number }>
        for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') found.push(`${tab}: ${v.id} (${v.impact}, ${v.nodes} nodes)`)
      }
      await axeContext.close()
      expect(found).toEqual([])
    })
  })
})
