import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { INTEGRATION, LINE_CHECK_INTEGRATION, LINE_CHECK_TIMING, TIMING } from '../../vitest.config.js'

/**
 * CI runs on Node 24 only the files `LINE_CHECK_*` name (docs/decisions.md, "CI's second line:
 * what differs, not everything twice"). A name that matches nothing, after a file is renamed or
 * moved, would drop that file from the Node 24 run without a word; one that names a file of
 * another project would too (the integration project leaves out every timing file).
 */
const ROOT = new URL('../../', import.meta.url)
const FILES = ['test', 'examples'].flatMap((folder) =>
  readdirSync(new URL(folder, ROOT), { recursive: true, encoding: 'utf8' })
    .map((file) => `${folder}/${file.split('\\').join('/')}`)
    .filter((file) => file.endsWith('.test.ts')),
)

/** The globs these lists use: a `**` folder (any folders, or none) and `*` (within a name). */
function matcher(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|\[\]\\]/g, '\\$&')
  return new RegExp(`^${escaped.split('**/').map((part) => part.replace(/\*/g, '[^/]*')).join('(?:[^/]+/)*')}$`)
}

const matchesAny = (file: string, globs: readonly string[]) => globs.some((glob) => matcher(glob).test(file))

describe("CI's Node 24 check names files of the right projects", () => {
  it('reads the globs as vitest does', () => {
    expect(matchesAny('test/faults/outage.postgres.test.ts', ['test/faults/**/*.test.ts'])).toBe(true)
    expect(matchesAny('test/faults/deep/outage.test.ts', ['test/faults/**/*.test.ts'])).toBe(true)
    expect(matchesAny('test/faults/outage.test.ts', ['**/*.postgres.test.ts'])).toBe(false)
    expect(matchesAny('test/cli/cli.test.ts', ['test/cli/cli.test.ts'])).toBe(true)
    expect(matchesAny('test/cli/cliXtest.ts', ['test/cli/cli.test.ts'])).toBe(false)
  })

  it.each(LINE_CHECK_INTEGRATION)('%s: an integration file that exists, not a timing one', (glob) => {
    const files = FILES.filter((file) => matcher(glob).test(file))
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) {
      expect(matchesAny(file, INTEGRATION), file).toBe(true)
      expect(matchesAny(file, TIMING), file).toBe(false)
    }
  })

  it.each(LINE_CHECK_TIMING)('%s: a timing file that exists', (glob) => {
    const files = FILES.filter((file) => matcher(glob).test(file))
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) expect(matchesAny(file, TIMING), file).toBe(true)
  })
})
