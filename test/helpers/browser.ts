import { execFileSync } from 'node:child_process'
import type { Page } from 'playwright-core'
import { describe, it } from 'vitest'

/**
 * Browser tests drive Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it when
 * missing) through playwright-core: never a browser downloaded by Playwright. Without the binary
 * a suite is skipped with a notice; under CI=true it fails instead.
 */
export const chromiumPath = findChromium()
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false' && process.env.CI !== '0'

/** The flags every launch uses: headless, as root in a sandbox-less container, and quiet on the network. */
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync']

function findChromium(): string | undefined {
  try {
    const found = execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim()
    return found === '' ? undefined : found
  } catch {
    return undefined
  }
}

/** `describe` for a suite that needs Chromium: skipped with a notice, or failing under CI. */
export function describeBrowser(name: string, body: () => void): void {
  if (chromiumPath === undefined) {
    if (inCi) {
      describe(name, () => {
        it('needs Chromium under CI', () => {
          throw new Error('chromium is not installed and CI=true: apt-get install -y chromium (.ci/run does it)')
        })
      })
      return
    }
    console.warn(`[browser] skipping "${name}": apt-get install -y chromium to run it`)
  }
  describe.skipIf(chromiumPath === undefined)(name, body)
}

/** Gathers into `errors` what the page logs as an error and the exceptions it throws, for a test to expect none. */
export function collectPageErrors(page: Page, errors: string[]): void {
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
}
