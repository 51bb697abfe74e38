// README.md's "Quick start", followed as written (issue 26): its code blocks are read from the
// README itself, never copied here. In an empty folder the packed package and the packages its
// install lines name are installed (offline, at our lock's versions), its other shell lines run,
// its server starts on a free port, and its curl line, sent over real HTTP with the key the
// server printed, must answer 200 with data. Its TypeScript must also compile, strict with
// skipLibCheck false, with nothing installed beyond what the install lines name.
import { spawn, type ChildProcess } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { KeyManagementError, portsOf, workforceApi } from '../../src/index.js'
import { consumerLock, type Lockfile } from '../package/consumer-lock.js'
import { killedWithDescendants } from '../helpers/child-process.js'
import { freePort } from '../helpers/free-port.js'
import { npmCommand, packedTarball, ROOT, runQuietly } from '../helpers/packed-tarball.js'

const STEP_TIMEOUT_MS = 180_000

interface Block {
  lang: string
  code: string
  /** The prose between the previous block (or the heading) and this one. */
  before: string
}

/** The fenced blocks of the README section `## <title>`, in order. */
function sectionBlocks(readme: string, title: string): Block[] {
  const start = readme.indexOf(`\n## ${title}\n`)
  if (start === -1) throw new Error(`README.md has no "## ${title}" section`)
  const rest = readme.slice(start + 1)
  const next = rest.indexOf('\n## ', 1)
  const section = next === -1 ? rest : rest.slice(0, next)
  const blocks: Block[] = []
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm
  let previousEnd = 0
  for (const match of section.matchAll(fence)) {
    blocks.push({ lang: match[1]!, code: match[2]!, before: section.slice(previousEnd, match.index) })
    previousEnd = match.index + match[0].length
  }
  return blocks
}

interface Plan {
  /** Packages the install lines name (the package itself among them). */
  packages: string[]
  /** Shell lines to run as they are, in order, before the server starts (`npx workforce-api seed …`). */
  setup: string[]
  /** The TypeScript file: its name, as the prose before it says, and its code. */
  file: { name: string; code: string }
  /** The command that starts the server (`npx tsx server.mts`), as words. */
  start: string[]
  curl: string
}

/** Reads the section's blocks as a reader would follow them. */
function planOf(blocks: Block[]): Plan {
  const plan: Partial<Plan> & { packages: string[]; setup: string[] } = { packages: [], setup: [] }
  for (const block of blocks) {
    if (block.lang === 'ts') {
      const names = [...block.before.matchAll(/`([\w.-]+\.m?ts)`/g)].map((m) => m[1]!)
      if (names.length === 0) throw new Error('the prose before the TypeScript block names no file to save it as')
      plan.file = { name: names[0]!, code: block.code }
      continue
    }
    if (block.lang !== 'sh') throw new Error(`unexpected code block language "${block.lang}"`)
    for (const line of block.code.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'))) {
      const words = line.split(/\s+/)
      if (words[0] === 'npm' && (words[1] === 'install' || words[1] === 'i')) plan.packages.push(...words.slice(2).filter((w) => !w.startsWith('-')))
      else if (words[0] === 'curl') plan.curl = line
      else if (words[0] === 'npx' && (words[1] === 'tsx' || words[1] === 'node')) plan.start = words.slice(1)
      else if (plan.file === undefined || plan.start === undefined) plan.setup.push(line)
      else throw new Error(`a shell line the test does not know how to follow: ${line}`)
    }
  }
  for (const part of ['file', 'start', 'curl'] as const) if (plan[part] === undefined) throw new Error(`the Quick start has no ${part}`)
  return plan as Plan
}

/** The request a curl line makes: its `-H` headers and its URL, with `$NAME` taken from `vars`. */
function curlRequest(line: string, vars: Record<string, string>): { url: string; headers: Record<string, string> } {
  const expand = (text: string) => text.replace(/\$(\w+)/g, (_, name: string) => {
    if (vars[name] === undefined) throw new Error(`the curl line uses $${name}, which nothing set`)
    return vars[name]
  })
  const headers: Record<string, string> = {}
  for (const [, header] of line.matchAll(/-H\s+"([^"]+)"/g)) {
    const [name, ...value] = expand(header!).split(':')
    headers[name!.trim()] = value.join(':').trim()
  }
  const url = /\s(https?:\/\/\S+)/.exec(line)?.[1]
  if (url === undefined) throw new Error(`no URL in the curl line: ${line}`)
  return { url: expand(url.replace(/^"|"$/g, '')), headers }
}

/** The temporary folder (tarball and project); removed at the end. */
let scratch: string | undefined
/** The reader's empty folder, inside `scratch`. */
let work: string
let plan: Plan
let server: ChildProcess | undefined
const bin = (name: string) => join(work, 'node_modules', '.bin', name)

beforeAll(async () => {
  plan = planOf(sectionBlocks(await readFile(join(ROOT, 'README.md'), 'utf8'), 'Quick start'))
  const packed = await packedTarball()
  scratch = await mkdtemp(join(tmpdir(), 'wfa-quick-start-'))
  const project = join(scratch, 'project')
  await mkdir(project)
  await copyFile(packed.tarball, join(scratch, packed.filename))
  // The install lines, resolved at our lock's versions so `npm ci --offline` finds every one in
  // the cache our own install filled: no registry. The package itself is the packed tarball.
  const ours = JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')) as Lockfile
  const extra = plan.packages.filter((name) => name !== packed.manifest.name)
  const { dependencies, lock } = consumerLock(ours, 'quick-start', { manifest: packed.manifest, spec: `file:../${packed.filename}`, integrity: packed.integrity }, extra)
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'quick-start', version: '0.0.0', private: true, dependencies }, null, 2))
  // An entry our lock holds without `resolved` (some installs leave it out) would send npm to the
  // registry for its metadata; with the registry's tarball URL it comes from the cache by integrity.
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.resolved !== undefined || entry.integrity === undefined || entry.version === undefined) continue
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
    entry.resolved = `https://registry.npmjs.org/${name}/-/${name.split('/').at(-1)}-${entry.version}.tgz`
  }
  await writeFile(join(project, 'package-lock.json'), JSON.stringify(lock, null, 2))
  await runQuietly(npmCommand, ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], project, {}, STEP_TIMEOUT_MS)
  // better-sqlite3 builds (or downloads) its native part in an install script, which needs the
  // network: the one our own install made for this machine is the same file.
  // On another Node line (`scripts/node-line.sh <major> --sqlite`, as `npm run test:node24`
  // runs the suite), ours is built for Node 20: the project gets the line's, as
  // test/package/node-lines.test.ts links it.
  const lineDriver = process.env.WFA_NODE_LINE_SQLITE
  if (plan.packages.includes('better-sqlite3') && lineDriver !== undefined && lineDriver !== '') {
    await rm(join(project, 'node_modules', 'better-sqlite3'), { recursive: true, force: true })
    await symlink(join(lineDriver, 'node_modules', 'better-sqlite3'), join(project, 'node_modules', 'better-sqlite3'), 'dir')
  } else if (plan.packages.includes('better-sqlite3')) {
    const release = join('node_modules', 'better-sqlite3', 'build', 'Release')
    await mkdir(join(project, release), { recursive: true })
    await copyFile(join(ROOT, release, 'better_sqlite3.node'), join(project, release, 'better_sqlite3.node'))
  }
  work = project
  await writeFile(join(work, plan.file.name), plan.file.code)
}, STEP_TIMEOUT_MS)

afterAll(async () => {
  if (server !== undefined) await killedWithDescendants(server)
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true })
})

describe('README Quick start (issue 26)', () => {
  it('names every package it needs, from the plugin to the types strict TypeScript needs', () => {
    expect(plan.packages).toEqual(expect.arrayContaining(['fastify-workforce-api', 'fastify', 'better-sqlite3', 'tsx']))
  })

  it('runs as written: seeded, started, and its curl line answers 200 with data', async () => {
    const env = { ...process.env, PATH: `${join(work, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` }
    for (const line of plan.setup) await runQuietly('sh', ['-c', line], work, env, STEP_TIMEOUT_MS)

    const port = await freePort()
    const [command, ...args] = plan.start
    // A group of its own: the command's launcher runs the server in a process of its own, killed with it.
    const child = spawn(bin(command!), args, { cwd: work, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    server = child
    let output = ''
    const key = await new Promise<string>((resolve, reject) => {
      let printed: string | undefined
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        printed ??= /owk_[0-9a-f]{16}_[0-9a-f]{64}/.exec(output)?.[0]
        // Fastify logs "Server listening at …" once the port is open.
        if (printed !== undefined && /Server listening at/.test(output)) resolve(printed)
      }
      child.stdout!.on('data', onData)
      child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
      child.once('exit', (code) => reject(new Error(`${plan.start.join(' ')} exited with ${code}:\n${output}`)))
    })

    const { url, headers } = curlRequest(plan.curl, { KEY: key })
    const target = new URL(url)
    expect(target.port, 'the curl line calls the port the server listens on by default').toBe('3000')
    target.hostname = '127.0.0.1'
    target.port = String(port)
    const res = await fetch(target, { headers })
    const body = (await res.json()) as { data?: unknown[] }
    expect(res.status, JSON.stringify(body)).toBe(200)
    expect(Array.isArray(body.data) && body.data.length > 0, JSON.stringify(body)).toBe(true)
    // The key is printed for the reader, and the request log never holds it.
    expect(output.split(key).length - 1, 'the key appears once: where it is printed').toBe(1)
  }, STEP_TIMEOUT_MS)

  it('type-checks with the packages it installs: strict, skipLibCheck false', async () => {
    const compilerOptions = { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, skipLibCheck: false, noEmit: true }
    await writeFile(join(work, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: [plan.file.name] }, null, 2))
    const check = await runQuietly(bin('tsc'), ['-p', 'tsconfig.json'], work, {}, STEP_TIMEOUT_MS).then(() => 'compiles', (error: Error) => error.message)
    expect(check).toBe('compiles')
  }, STEP_TIMEOUT_MS)
})

describe('what the Quick start says of keys.create (issue 26)', () => {
  it('refuses a company the database does not hold, with a KeyManagementError (not_found), and makes no key', async () => {
    const adapter = createMemoryAdapter()
    const app = Fastify()
    await app.register(workforceApi, { prefix: '/api/public', ...portsOf(adapter) })
    try {
      const refused = await app.workforceApi.keys.create({ companyId: 1, scopes: ['users:read'] }).catch((error: unknown) => error)
      expect(refused).toBeInstanceOf(KeyManagementError)
      expect(refused).toMatchObject({ reason: 'not_found', message: expect.stringMatching(/^No company with id 1\b/) })
      expect(await app.workforceApi.keys.list()).toEqual([])
    } finally {
      await app.close()
    }
  })
})
