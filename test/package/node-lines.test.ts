// The packed package on each supported Node.js line (20, 22 and 24; docs/decisions.md, "Node.js
// lines (issue 26)"): `npm pack` as consumer.test.ts does, install the tarball and fastify into
// a consumer project with that line's npm and Node (`npm ci --offline`, the lock cut from ours),
// give it the line's better-sqlite3, then run an ES module host and a CommonJS host that open
// the SQLite adapter on a file (read workers included), register the plugin, listen on
// 127.0.0.1:0 and answer real HTTP requests with 200.
//
// The lines come from `npm run node-lines` (scripts/node-line.sh): Node's own builds from the
// npm registry in .node-lines/<major>/, each with better-sqlite3 installed for it in
// .node-lines/<major>/sqlite/ (built from source against the line's headers, once; reused by
// both hosts and by later runs). A line that is not there is skipped with a notice, and under
// CI=true fails. This file is the same on any Node: `npm run test:node24` skips it.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consumerLock, type Lockfile, type PackedPackage } from './consumer-lock.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const LINES = [20, 22, 24] as const
type Line = (typeof LINES)[number]
/** Installs are offline and the hosts are small: each step is seconds; this bounds a stuck one. */
const STEP_TIMEOUT_MS = 120_000
/** npm's own range check (semver: a dependency of our dev tools; it has no types of its own). */
const { satisfies } = createRequire(import.meta.url)('semver') as { satisfies: (version: string, range: string) => boolean }
const inCi = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false' && process.env.CI !== '0'

interface Prepared {
  line: Line
  /** .node-lines/<major>: bin/node, include/node. */
  dir: string
  node: string
  /** The better-sqlite3 installed for the line, and its version. */
  sqlite: string
  sqliteVersion: string
}

function prepared(line: Line): Prepared | string {
  const dir = join(ROOT, '.node-lines', String(line))
  const node = join(dir, 'bin', 'node')
  const sqlite = join(dir, 'sqlite', 'node_modules', 'better-sqlite3')
  if (!existsSync(node)) return `.node-lines/${line}/bin/node is missing`
  if (!existsSync(join(sqlite, 'package.json'))) return `.node-lines/${line}/sqlite has no better-sqlite3`
  const { version } = JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')) as { version: string }
  return { line, dir, node, sqlite, sqliteVersion: version }
}

// Not run inside `scripts/node-line.sh` (`npm run test:node24`): it would install the same three
// lines again. vitest.config.ts leaves it out of that run.
const lines = LINES.map((line) => ({ line, found: prepared(line) }))
const missing = lines.filter((entry): entry is { line: Line; found: string } => typeof entry.found === 'string')
const ready = lines.flatMap(({ found }) => (typeof found === 'string' ? [] : [found]))

interface Run {
  stdout: string
  stderr: string
}

/**
 * The environment of a command on `line`: its Node first on PATH (npm's `#!/usr/bin/env node`
 * included), its headers for node-gyp; without the outer npm script's variables (see
 * consumer.test.ts) and without scripts/node-line-preload.cjs, were an outer run to set it.
 */
function environment(line: Prepared): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(([name]) => !/^npm_(?!config_)|^npm_config_local_prefix$|^npm_config_nodedir$|^WFA_NODE_LINE_/i.test(name))
  const nodeOptions = (process.env.NODE_OPTIONS ?? '').replace(/--require \S*node-line-preload\.cjs/g, '').trim()
  return { ...Object.fromEntries(kept), NODE_OPTIONS: nodeOptions, PATH: `${join(line.dir, 'bin')}${delimiter}${process.env.PATH ?? ''}`, npm_config_nodedir: line.dir }
}

function run(line: Prepared, command: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: environment(line), timeout: STEP_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`Node ${line.line}: ${[command, ...args].join(' ')} (in ${cwd}) failed: ${error.message}\n${stdout}\n${stderr}`))
      else resolve({ stdout, stderr })
    })
  })
}

/** What both hosts do once they have loaded the modules (each loads them in its own syntax). */
const HOST_BODY = `
  const loaded = { node: process.version, betterSqlite3: requireVersion() }
  const now = new Date('2026-01-01T00:00:00Z')
  // A file, so the read workers start (two, by default); slowReadMs 0 sends the list to them.
  const adapter = await openSqliteAdapter({ filename: join(process.cwd(), name + '.db'), slowReadMs: 0 })
  await adapter.loadDataset({
    ...emptyDataset(),
    companies: [{ id: 1, name: 'Acme', timezone: 'Europe/Rome', country: 'IT', created_at: now, updated_at: now }],
    modules: [{ company_id: 1, module: 'core', active: true }],
  })
  const app = Fastify()
  await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter) })
  app.addHook('onClose', () => adapter.close())
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['company:read', 'users:read'] })
  const base = 'http://127.0.0.1:' + app.server.address().port + '/api/public/v1'
  const answers = {}
  for (const path of ['/company', '/users']) {
    const response = await fetch(base + path, { headers: { authorization: 'Bearer ' + key } })
    answers[path] = { status: response.status, body: await response.json() }
  }
  await app.close()
  console.log(JSON.stringify({ ...loaded, answers }))
`

const ESM_HOST = `// An ES module host on the SQLite adapter, over real HTTP.
import { createRequire } from 'node:module'
import { join } from 'node:path'
import Fastify from 'fastify'
import workforceApi, { emptyDataset, portsOf } from 'fastify-workforce-api'
import { openSqliteAdapter } from 'fastify-workforce-api/sqlite'
const name = 'esm'
const requireVersion = () => createRequire(import.meta.url)('better-sqlite3/package.json').version
${HOST_BODY}`

const CJS_HOST = `// A CommonJS host on the SQLite adapter, over real HTTP.
const { join } = require('node:path')
const Fastify = require('fastify')
const { default: workforceApi, emptyDataset, portsOf } = require('fastify-workforce-api')
const { openSqliteAdapter } = require('fastify-workforce-api/sqlite')
const name = 'cjs'
const requireVersion = () => require('better-sqlite3/package.json').version
async function main() {
${HOST_BODY}}
main().catch((error) => {
  console.error(error)
  process.exit(1)
})
`

let work: string
/** Each line's consumer project, installed; its promise rejects when the install failed. */
const consumers = new Map<Line, Promise<string>>()

beforeAll(async () => {
  if (ready.length === 0) return
  for (const target of ['dist/index.js', 'dist/index.cjs']) {
    if (!existsSync(join(ROOT, target))) throw new Error(`${target} is missing: run \`npm run build\` first (\`npm test\` does)`)
  }
  work = await mkdtemp(join(tmpdir(), 'wfa-node-lines-'))
  // --ignore-scripts: `prepack` would rebuild dist under the other test files' feet.
  const packOutput = await run(ready[0]!, 'npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT)
  const [packed] = JSON.parse(packOutput.stdout) as Array<{ filename: string; integrity: string }>
  const ours = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as PackedPackage['manifest']

  const install = async (line: Prepared) => {
    const dir = join(work, `node-${line.line}`)
    await mkdir(dir)
    const packedPackage = { manifest, spec: `file:../${packed!.filename}`, integrity: packed!.integrity }
    const { dependencies, lock } = consumerLock(ours, `consumer-node-${line.line}`, packedPackage, ['fastify'])
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `consumer-node-${line.line}`, version: '0.0.0', private: true, dependencies }, null, 2))
    await writeFile(join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2))
    await writeFile(join(dir, 'host.mjs'), ESM_HOST)
    await writeFile(join(dir, 'host.cjs'), CJS_HOST)
    // The line's npm, on the line's Node; every package from the cache our own `npm ci` filled.
    await run(line, 'npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], dir)
    // The driver built for this line (scripts/node-line.sh --sqlite), where the host resolves it.
    await symlink(line.sqlite, join(dir, 'node_modules', 'better-sqlite3'), 'dir')
    return dir
  }
  for (const line of ready) {
    const installed = install(line)
    installed.catch(() => {}) // awaited by the line's tests
    consumers.set(line.line, installed)
  }
  // On a failure, no install is still writing when afterAll removes the folder.
  await Promise.allSettled(consumers.values())
}, STEP_TIMEOUT_MS)

afterAll(async () => {
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

if (missing.length > 0) {
  const why = missing.map(({ found }) => found).join('; ')
  if (inCi) {
    describe('Node.js lines', () => {
      it('are all prepared under CI', () => {
        throw new Error(`${why}: run \`npm run node-lines\` first (.ci/run does)`)
      })
    })
  } else {
    console.warn(`[node-lines] skipping Node ${missing.map(({ line }) => line).join(', ')}: ${why}; \`npm run node-lines\` fetches them`)
    describe.skip.each(missing)('the packed package on Node $line', () => {
      it('needs `npm run node-lines`', () => {})
    })
  }
}

describe.each(ready)('the packed package on Node $line', (line) => {
  it("installs a better-sqlite3 that our peer range admits (what `npm install` checks for a host)", async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }
    const range = manifest.peerDependencies['better-sqlite3']!
    expect(satisfies(line.sqliteVersion, range), `better-sqlite3@${line.sqliteVersion} on Node ${line.line}, peer range ${range}`).toBe(true)
  })

  it.each([
    ['an ES module', 'host.mjs'],
    ['a CommonJS', 'host.cjs'],
  ])('serves from %s host over the SQLite adapter (better-sqlite3 built for the line), over real HTTP', async (_kind, host) => {
    const dir = await consumers.get(line.line)!
    const result = JSON.parse((await run(line, line.node, [host], dir)).stdout) as {
      node: string
      betterSqlite3: string
      answers: Record<string, { status: number; body: unknown }>
    }
    expect(result.node).toMatch(new RegExp(`^v${line.line}\\.`))
    expect(result.betterSqlite3).toBe(line.sqliteVersion)
    expect(result.answers).toEqual({
      '/company': { status: 200, body: { data: { id: 1, name: 'Acme', timezone: 'Europe/Rome', country: 'IT', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' } } },
      '/users': { status: 200, body: expect.objectContaining({ data: [] }) },
    })
  }, STEP_TIMEOUT_MS)
})
