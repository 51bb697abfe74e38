// A newcomer's `npm install` ends without a list of install scripts to review (npm 11.19 and
// later print one for every dependency script that `allowScripts` in package.json does not cover,
// and block them when `strict-allow-scripts` is on: then better-sqlite3 has no native module).
// docs/decisions.md, "The first hour with the CLI and the example (issue 26, newcomers)".
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** npm's version, as `[major, minor]`. */
function npmVersion(): [number, number] {
  const [major = 0, minor = 0] = execFileSync('npm', ['--version'], { cwd: ROOT, encoding: 'utf8' }).trim().split('.').map(Number)
  return [major, minor]
}

it('package.json allows every install script of the installed tree, so npm lists none to review', () => {
  const [major, minor] = npmVersion()
  if (major < 11 || (major === 11 && minor < 19)) {
    // Before 11.19 npm has no such list (and no command to ask for it): nothing to check but that.
    expect(() => execFileSync('npm', ['install-scripts', 'ls', '--json'], { cwd: ROOT, stdio: 'pipe' })).toThrow()
    return
  }
  const listed = JSON.parse(execFileSync('npm', ['install-scripts', 'ls', '--json'], { cwd: ROOT, encoding: 'utf8' })) as { allowScripts: Array<{ name: string }> }
  expect(listed.allowScripts.map(({ name }) => name)).toEqual([])
})
