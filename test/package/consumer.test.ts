// The package as a consumer gets it: `npm pack` the built `dist` (npm test builds it first),
// check the tarball with attw and publint, install it into small consumer projects with
// `npm ci --offline` (their locks are cut from ours: see consumer-lock.ts), then run them from
// ESM and CommonJS and type-check them, strict with skipLibCheck false, under node16, nodenext,
// bundler and node10 resolution. docs/decisions.md, "Packaging (issue 11)", says why each check.
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'
import { publint } from 'publint'
import { formatMessage } from 'publint/utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consumerLock, type Lockfile, type PackedPackage } from './consumer-lock.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CONSUMER = fileURLToPath(new URL('./consumer/', import.meta.url))
const require = createRequire(import.meta.url)
/** Every step here is bounded; the whole file takes ~30 to 60 s. */
const STEP_TIMEOUT_MS = 120_000
/** Type-checks at a time: each is one CPU for ~7 s, and other test files run beside this one. */
const TYPECHECK_CONCURRENCY = 2

/** What each consumer project installs besides the tarball, all at the versions of our lock. */
const PROJECTS = {
  // No driver and no driver types: the root, `/memory` and `/conformance` must not need them.
  minimal: ['fastify', '@types/node'],
  // pg, and both drivers' types (better-sqlite3 itself is native: its types are enough to compile).
  drivers: ['fastify', '@types/node', 'pg', '@types/pg', '@types/better-sqlite3'],
} as const
type Project = keyof typeof PROJECTS

const NODE16 = { module: 'node16', moduleResolution: 'node16' }
const NODENEXT = { module: 'nodenext', moduleResolution: 'nodenext' }
/**
 * Each TypeScript program: strict, skipLibCheck false, Node's own libraries. node16 and nodenext
 * each compile both formats, the first without any driver types. One module format per
 * program: a program that imports the package both as ESM and as CommonJS sees two
 * declarations of `app.workforceApi` (the dual-package hazard, docs/decisions.md).
 */
const PROGRAMS = [
  { project: 'minimal', name: 'node16, ESM', options: NODE16, files: ['types.mts'] },
  { project: 'minimal', name: 'node16, CommonJS', options: NODE16, files: ['types.cts'] },
  { project: 'drivers', name: 'nodenext, ESM', options: NODENEXT, files: ['types.mts', 'adapters.mts'] },
  { project: 'drivers', name: 'nodenext, CommonJS', options: NODENEXT, files: ['types.cts', 'adapters.cts'] },
  { project: 'drivers', name: 'bundler', options: { module: 'esnext', moduleResolution: 'bundler' }, files: ['types.mts', 'adapters.mts'] },
  // esModuleInterop: fastify's own types (pino's) need it under node10.
  { project: 'drivers', name: 'node10', options: { module: 'commonjs', moduleResolution: 'node10', esModuleInterop: true }, files: ['types.cts', 'adapters.cts'] },
] as const satisfies ReadonlyArray<{ project: Project; name: string; options: object; files: readonly string[] }>

interface Run {
  stdout: string
  stderr: string
}

/**
 * Whether an outer `npm test` set `name` for its own script: its package, its lifecycle, and
 * `npm_config_local_prefix`, which would point an inner npm at our project instead of the
 * consumer's. The other `npm_config_*` (cache, registry, user config) are what the inner npm
 * must share for its offline install to find our cache.
 */
const fromOuterScript = (name: string) => /^npm_(?!config_)|^npm_config_local_prefix$/i.test(name)

/** Runs a command as a consumer would, without the outer npm script's variables. */
function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !fromOuterScript(name)))
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, timeout: STEP_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(new Error(`${[command, ...args].join(' ')} (in ${cwd}) failed: ${error.message}\n${stdout}\n${stderr}`), { stdout, stderr }))
      else resolve({ stdout, stderr })
    })
  })
}

const npm = (args: readonly string[], cwd: string) => run(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, cwd)
const node = (args: readonly string[], cwd: string) => run(process.execPath, args, cwd)

/** Runs at most `concurrency` of the tasks given to it at once. */
function limit(concurrency: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: Array<() => void> = []
  return async (task) => {
    if (running < concurrency) running += 1
    else await new Promise<void>((resolve) => waiting.push(resolve)) // a finishing task hands its slot over
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next === undefined) running -= 1
      else next()
    }
  }
}

function binOf(pkg: string, name: string): string {
  const manifestPath = require.resolve(`${pkg}/package.json`)
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin: Record<string, string> }
  return join(dirname(manifestPath), manifest.bin[name]!)
}

let work: string
let tarball: string
let packedFiles: string[]
let attw: Promise<Run>
let typechecks: Map<string, Promise<Run>>

beforeAll(async () => {
  for (const target of ['dist/index.js', 'dist/index.cjs', 'dist/cli.js']) {
    if (!existsSync(join(ROOT, target))) throw new Error(`${target} is missing: run \`npm run build\` first (\`npm test\` does)`)
  }
  work = await mkdtemp(join(tmpdir(), 'wfa-package-'))
  // --ignore-scripts: `prepack` would rebuild dist under the other test files' feet.
  const [packed] = JSON.parse((await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT)).stdout) as Array<{
    filename: string
    integrity: string
    files: Array<{ path: string }>
  }>
  tarball = join(work, packed!.filename)
  packedFiles = packed!.files.map((file) => file.path)

  // attw exits 1 when it finds a problem; its report is the same JSON either way.
  attw = node([binOf('@arethetypeswrong/cli', 'attw'), tarball, '--format', 'json'], work).catch((error: Error & Partial<Run>) => ({ stdout: error.stdout ?? '', stderr: error.message }))

  const ours = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as PackedPackage['manifest']
  const install = async (project: Project) => {
    const dir = join(work, project)
    await cp(CONSUMER, dir, { recursive: true })
    const packedPackage = { manifest, spec: `file:../${packed!.filename}`, integrity: packed!.integrity }
    const { dependencies, lock } = consumerLock(ours, `consumer-${project}`, packedPackage, PROJECTS[project])
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: `consumer-${project}`, version: '0.0.0', private: true, dependencies }, null, 2))
    await writeFile(join(dir, 'package-lock.json'), JSON.stringify(lock, null, 2))
    // --offline: every package comes from the cache our own `npm ci` filled; none from the registry.
    await npm(['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], dir)
  }
  // allSettled: on a failure, no install is still writing when afterAll removes the folder.
  const installs = await Promise.allSettled((Object.keys(PROJECTS) as Project[]).map(install))
  for (const outcome of installs) if (outcome.status === 'rejected') throw outcome.reason

  const typescript = binOf('typescript', 'tsc')
  const queue = limit(TYPECHECK_CONCURRENCY)
  typechecks = new Map()
  for (const [index, { project, name, options, files }] of PROGRAMS.entries()) {
    const dir = join(work, project)
    const compilerOptions = { ...options, target: 'es2022', lib: ['es2023'], types: ['node'], strict: true, skipLibCheck: false, noEmit: true }
    await writeFile(join(dir, `tsconfig.${index}.json`), JSON.stringify({ compilerOptions, files }, null, 2))
    const check = queue(() => node([typescript, '-p', `tsconfig.${index}.json`], dir))
    check.catch(() => {}) // awaited by its test
    typechecks.set(`${project}: ${name}`, check)
  }
}, STEP_TIMEOUT_MS)

afterAll(async () => {
  await Promise.allSettled([attw, ...(typechecks?.values() ?? [])])
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

describe('the packed tarball', () => {
  it('holds dist, the docs, README, LICENSE and CHANGELOG; no source maps, sources or tests', () => {
    expect(packedFiles).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'docs/api.md', 'dist/index.js', 'dist/index.cjs', 'dist/cli.js']))
    const unexpected = packedFiles.filter((path) => !/^(dist|docs)\//.test(path) && !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(path))
    expect(unexpected).toEqual([])
    expect(packedFiles.filter((path) => path.endsWith('.map'))).toEqual([])
  })

  it('holds the OpenAPI documents README.md and docs/admin-api.md link to (issue 26)', () => {
    expect(packedFiles).toEqual(expect.arrayContaining(['docs/openapi.json', 'docs/admin-openapi.json']))
  })

  it('holds no file that the exports, the bin or the SQLite workers cannot reach', async () => {
    const packageDir = join(work, 'minimal', 'node_modules', 'fastify-workforce-api')
    const manifest = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { exports: unknown; bin: Record<string, string> }
    const targets = (value: unknown): string[] =>
      typeof value === 'string' ? [value] : value !== null && typeof value === 'object' ? Object.values(value).flatMap(targets) : []
    // The workers are started by path (adapters/sqlite/worker-entry.ts), not imported.
    const workers = ['./dist/adapters/sqlite/sqlite-read-worker.js', './dist/adapters/sqlite/sqlite-read-worker.cjs', './dist/seed/sqlite-seed-worker.js']
    // The built portal is read by path (registerPortal) and served as it is: every file of it is reached.
    const portal = packedFiles.filter((path) => path.startsWith('dist/portal/')).map((path) => `./${path}`)
    expect(portal).toEqual(expect.arrayContaining(['./dist/portal/index.html', './dist/portal/workforce-portal.js']))
    const roots = [...targets(manifest.exports), ...Object.values(manifest.bin), ...workers, ...portal]
    const reached = new Set<string>()
    const visit = async (file: string) => {
      // A name that is not a packed file is prose, such as an @example in a doc comment.
      if (reached.has(file) || !packedFiles.includes(file)) return
      reached.add(file)
      if (!/\.(c?js|d\.c?ts)$/.test(file)) return
      const text = await readFile(join(packageDir, file), 'utf8')
      const specifiers = text.matchAll(/(?:from\s*|import\s*\(?\s*|require\s*\(\s*)['"](\.\.?\/[^'"]+)['"]/g)
      for (const [, specifier] of specifiers) {
        let target = posix.join(posix.dirname(file), specifier!)
        // A declaration file names its sibling by the JavaScript it describes.
        if (file.endsWith('.d.ts')) target = target.replace(/\.js$/, '.d.ts')
        if (file.endsWith('.d.cts')) target = target.replace(/\.(c?js)$/, '.d.cts')
        await visit(target)
      }
    }
    for (const root of roots) await visit(posix.normalize(root))
    const unreachable = packedFiles.filter((path) => path.startsWith('dist/') && !reached.has(path))
    expect(unreachable).toEqual([])
  })

  // The library's entries, which a host may import side by side. A read worker and the CLI
  // (`dist/cli.js` and its chunks in `dist/cli/`, Kysely and TypeBox inside) run code of their
  // own in a thread or process of their own, where no host's classes meet theirs.
  it('shares code between entry points: each class is defined once per format', async () => {
    const packageDir = join(work, 'minimal', 'node_modules', 'fastify-workforce-api')
    const apart = (path: string) => path.includes('sqlite-read-worker') || path === 'dist/cli.js' || path.startsWith('dist/cli/')
    expect(packedFiles.filter((path) => path.startsWith('dist/cli/')).length).toBeGreaterThan(0)
    for (const extension of ['.js', '.cjs']) {
      const seen = new Map<string, string>()
      const duplicates: string[] = []
      for (const path of packedFiles.filter((p) => p.endsWith(extension) && !apart(p))) {
        const text = await readFile(join(packageDir, path), 'utf8')
        for (const [, name] of text.matchAll(/^var (\w+) = class\b/gm)) {
          if (seen.has(name!)) duplicates.push(`${name} in ${seen.get(name!)} and ${path}`)
          else seen.set(name!, path)
        }
      }
      expect(seen.has('StorageUnavailable'), `StorageUnavailable in the ${extension} files`).toBe(true)
      expect(duplicates, extension).toEqual([])
    }
  })

  it('passes attw (Are the Types Wrong?) under node10, node16 from ESM and CommonJS, and bundler', async () => {
    const { stdout, stderr } = await attw
    expect(stdout, stderr).toMatch(/^\s*\{/)
    const report = JSON.parse(stdout) as { analysis: { problems: unknown[] } }
    expect(report.analysis.problems).toEqual([])
  })

  it('passes publint, suggestions included', async () => {
    const tarballBytes = await readFile(tarball)
    const { messages, pkg } = await publint({ pack: { tarball: tarballBytes.buffer.slice(tarballBytes.byteOffset, tarballBytes.byteOffset + tarballBytes.byteLength) as ArrayBuffer }, level: 'suggestion', strict: true })
    expect(messages.map((message) => formatMessage(message, pkg, { color: false }))).toEqual([])
  })

  it('builds before it is packed (prepack), so a clone without dist packs one', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    expect(manifest.scripts.prepack).toBe('npm run build')
  })
})

describe('a consumer project', () => {
  const company = { data: { id: 1, name: 'Acme', timezone: 'Europe/Rome', country: 'IT' } }
  const sqliteMissing = 'fastify-workforce-api/sqlite needs better-sqlite3: npm install better-sqlite3'

  it('in ESM registers the plugin over the memory adapter and answers GET /api/public/v1/company', async () => {
    const result = JSON.parse((await node(['esm.mjs'], join(work, 'minimal'))).stdout)
    expect(result).toMatchObject({ status: 200, body: company, sqlite: sqliteMissing })
  })

  it('in CommonJS does the same; the ESM-only conformance suite says how to load it', async () => {
    const result = JSON.parse((await node(['cjs.cjs'], join(work, 'minimal'))).stdout)
    expect(result).toMatchObject({ status: 200, body: company, sameExport: true, sqlite: sqliteMissing })
    expect(result.conformance).toMatch(/^fastify-workforce-api\/conformance is an ES module.*import\(\) from CommonJS/)
  })

  it('with pg installed loads the Postgres adapter in both formats; without better-sqlite3 the SQLite one names it', async () => {
    const result = JSON.parse((await node(['drivers.mjs'], join(work, 'drivers'))).stdout)
    expect(result).toEqual({ postgresEsm: 'function', postgresCjs: 'function', sqlite: sqliteMissing, sqliteCjs: sqliteMissing })
  })

  it('installs the workforce-api bin, which starts without the driver it does not use', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }
    const bin = join(work, 'drivers', 'node_modules', '.bin', 'workforce-api')
    expect((await run(bin, ['--version'], join(work, 'drivers'))).stdout.trim()).toBe(manifest.version)
  })

  it('loads the CommonJS build without require(esm), as Node 20 before 20.19 must', async () => {
    // Before 20.19 there is no require(esm) and no flag to turn it off.
    const flag = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module') ? ['--no-experimental-require-module'] : []
    const entries = ['fastify-workforce-api', 'fastify-workforce-api/memory', 'fastify-workforce-api/postgres']
    const script = `for (const entry of ${JSON.stringify(entries)}) require(entry); console.log('loaded')`
    expect((await node([...flag, '-e', script], join(work, 'drivers'))).stdout.trim()).toBe('loaded')
  })

  it.each(PROGRAMS)('type-checks ($project: $name; strict, skipLibCheck false)', async ({ project, name }) => {
    const check = typechecks.get(`${project}: ${name}`)!
    await expect(check.then(() => 'compiles', (error: Error) => error.message)).resolves.toBe('compiles')
  }, STEP_TIMEOUT_MS)
})
