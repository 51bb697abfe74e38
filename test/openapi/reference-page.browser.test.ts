import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { build, PREFIX, type TestApp } from '../helpers/build.js'
import { CHROMIUM_ARGS, chromiumPath, collectPageErrors, describeBrowser } from '../helpers/browser.js'

/** Screenshots of browser tests, kept for a human to look at (not committed). */
const OUTPUT = join(process.cwd(), 'test-results', 'openapi')

describeBrowser('the reference page in a real browser', () => {
  let t: TestApp
  let browser: Browser
  let base: string

  beforeAll(async () => {
    t = await build({ options: { openapi: { referencePage: true } } })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const address = t.app.server.address()
    if (address === null || typeof address === 'string') throw new Error('no address')
    base = `http://127.0.0.1:${address.port}`
    browser = await chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS })
  })

  afterAll(async () => {
    await browser?.close()
    await t?.close()
  })

  it('renders the users list operation with its parameters, from local assets only', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } })
    // Offline proof: any request that leaves this server is refused and remembered.
    const elsewhere: string[] = []
    await page.route('**/*', (route) => {
      const url = route.request().url()
      if (url.startsWith(base) || url.startsWith('data:')) return route.continue()
      elsewhere.push(url)
      return route.abort()
    })
    const failed: string[] = []
    page.on('requestfailed', (request) => failed.push(request.url()))
    const errors: string[] = []
    collectPageErrors(page, errors)

    await page.goto(`${base}${PREFIX}/docs`, { waitUntil: 'load' })
    await expect.poll(() => page.locator('.information-container .title').textContent(), { timeout: 15_000 }).toContain('Workforce public API')

    const operation = page.locator('#operations-users-listUsers')
    await operation.waitFor({ state: 'visible', timeout: 15_000 })
    await operation.locator('.opblock-summary').first().click()
    const rows = operation.locator('tr[data-param-name]')
    await rows.first().waitFor({ state: 'visible', timeout: 15_000 })
    const names = await rows.evaluateAll((elements) => elements.map((element) => element.getAttribute('data-param-name')))
    expect(names).toEqual(['page', 'per_page', 'starting_after', 'active', 'email', 'updated_since', 'If-None-Match'])
    await expect.poll(() => operation.locator('.opblock-summary-path').first().textContent()).toBe('/v1/users')
    // The enum-free boolean filter and the page bounds come from the route's own schema.
    expect(await operation.locator('tr[data-param-name="per_page"]').textContent()).toContain('100')

    mkdirSync(OUTPUT, { recursive: true })
    await page.screenshot({ path: join(OUTPUT, 'reference-page.png'), fullPage: false })

    expect(elsewhere).toEqual([])
    expect(failed).toEqual([])
    expect(errors).toEqual([])
    await page.close()
  })

  it('serves the same document the API serves at openapi.json', async () => {
    const page = await browser.newPage()
    const response = await page.goto(`${base}${PREFIX}/openapi.json`)
    expect(response?.status()).toBe(200)
    const served = (await response?.json()) as { paths: Record<string, unknown>; info: { title: string } }
    expect(served.info.title).toBe('Workforce public API')
    expect(Object.keys(served.paths)).toContain('/v1/users')
    await page.close()
  })
})
