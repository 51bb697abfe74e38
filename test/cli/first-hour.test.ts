import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { CLI, hasScript, runNode, shellLine, type CliResult } from '../helpers/cli.js'
import { freePort } from '../helpers/free-port.js'
import { killed, spawnUntil } from '../helpers/child-process.js'

// Issue 26: what a newcomer meets in the first hour, through the built CLI (`npm test` builds
// first), the example and the sync client as `npm run` starts them, some on a pseudo-terminal.
const ROOT = join(import.meta.dirname, '../..')
const TSX = join(ROOT, 'node_modules/.bin/tsx')
const EXAMPLE = join(ROOT, 'examples/sqlite/main.ts')
const SYNC_CLIENT = join(ROOT, 'examples/sync-client/main.ts')
const run = promisify(execFile)

/** The environment of every command here: no webhook key or API key of the caller's. */
const cleanEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ ...process.env, WORKFORCE_WEBHOOK_KEY: '', WORKFORCE_API_KEY: '', ...extra })
const cli = (...args: string[]) => runNode(args, { env: cleanEnv() })

/** A failure as a person sees it: one line on stderr, no stack frame. */
function expectOneLine(result: CliResult, code: number, ...parts: string[]): void {
  expect(result.code, result.stderr).toBe(code)
  const lines = result.stderr.trimEnd().split('\n')
  expect(lines, result.stderr).toHaveLength(1)
  for (const part of parts) expect(lines[0]).toContain(part)
  expect(result.stderr).not.toMatch(/^\s+at /m)
}

/** Something listening on a loopback port, as a forgotten server would. */
async function occupiedPort(): Promise<{ port: number; server: Server }> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as { port: number }).port, server }
}

/** Kills a child spawned `detached` together with its own children (SIGKILL to its process group). */
function killedGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    process.kill(-(child.pid as number), 'SIGKILL')
  })
}

/** Runs `command` with stdin, stdout and stderr on a pseudo-terminal (util-linux `script`). */
function inTerminal(command: readonly string[], env: NodeJS.ProcessEnv) {
  return spawn('script', ['-qec', shellLine(command), '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
}

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wfa-first-hour-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let holder: Server | undefined
afterEach(async () => {
  await new Promise<void>((resolve) => (holder === undefined ? resolve() : holder.close(() => resolve())))
  holder = undefined
})

async function migrated(name: string): Promise<string> {
  const db = join(dir, name)
  const result = await cli('migrate', '--db', db)
  expect(result.code, result.stderr).toBe(0)
  return db
}

async function seeded(name: string): Promise<string> {
  const db = join(dir, name)
  const result = await cli('seed', '--db', db)
  expect(result.code, result.stderr).toBe(0)
  return db
}

describe('npm run example', () => {
  it('builds everything npm run build builds (dist/cli.js included) before it starts', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    /** The commands an npm script runs, `npm run <other>` expanded. */
    const steps = (name: string): string[] =>
      (scripts[name] ?? '').split('&&').flatMap((part) => {
        const nested = /^npm run ([\w:-]+)$/.exec(part.trim())
        return nested === null ? [part.trim()] : steps(nested[1] as string)
      })
    const example = steps('example')
    const start = example.indexOf('tsx examples/sqlite/main.ts')
    expect(start).toBeGreaterThan(0)
    // tsup writes dist/cli.js (tsup.config.ts: `cli: 'src/cli/main.ts'`), vite the portal.
    expect(example.slice(0, start)).toEqual(steps('build'))
    expect(steps('build')).toContain('tsup')
    expect(readFileSync(join(ROOT, 'tsup.config.ts'), 'utf8')).toContain("cli: 'src/cli/main.ts'")
  })

  it('on a busy port says so in one line, with PORT=, exits 1, and has made no key', async () => {
    const busy = await occupiedPort()
    holder = busy.server
    const cwd = mkdtempSync(join(dir, 'example-busy-'))
    const result = await runNode([EXAMPLE], { script: TSX, cwd, env: cleanEnv({ PORT: String(busy.port), HOST: '' }) })
    expectOneLine(result, 1, `port ${busy.port} on 127.0.0.1 is already in use`, `PORT=${busy.port + 1} npm run example`)
    expect(result.stdout).not.toContain('owk_')
    const db = new Database(join(cwd, '.example/workforce-demo.db'), { readonly: true })
    try {
      expect(db.prepare('select count(*) as n from wfa_api_keys').get()).toEqual({ n: 0 })
    } finally {
      db.close()
    }
  })

  it('refuses a PORT that is not a port in one line, exit 2', async () => {
    const cwd = mkdtempSync(join(dir, 'example-bad-port-'))
    const result = await runNode([EXAMPLE], { script: TSX, cwd, env: cleanEnv({ PORT: '30oo' }) })
    expectOneLine(result, 2, 'PORT must be a port number from 0 to 65535, got "30oo"')
    expect(existsSync(join(cwd, '.example'))).toBe(false)
  })

  it('says PORT and HOST choose where it listens, and serves the reference page it names', async () => {
    const port = await freePort()
    const cwd = mkdtempSync(join(dir, 'example-up-'))
    // tsx runs the example in a child process of its own: a group of their own, ended together.
    const child = spawn(TSX, [EXAMPLE], { cwd, env: cleanEnv({ PORT: String(port) }), stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    try {
      let out = ''
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString()
          if (out.includes('Try:')) resolve()
        })
        child.once('exit', (code) => reject(new Error(`the example exited with ${code}: ${out}`)))
      })
      expect(out).toContain(`listening on http://127.0.0.1:${port}`)
      expect(out).toContain('PORT and HOST choose the port and address: PORT=3001 npm run example')
      const page = await fetch(`http://127.0.0.1:${port}/api/public/docs`)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toContain('text/html')
    } finally {
      await killedGroup(child)
    }
  })
})

describe('serve: the address it cannot listen on', () => {
  it('a busy port: one line naming host:port and --port, exit 1, no key file left', async () => {
    const db = await migrated('busy.db')
    const busy = await occupiedPort()
    holder = busy.server
    expectOneLine(await cli('serve', '--db', db, '--port', String(busy.port)), 1, `127.0.0.1:${busy.port} is already in use`, '--port <n>')
    expect(existsSync(`${db}.webhook-key`)).toBe(false)
  })

  it('a --host that is no address: one line, exit 2, no key file left', async () => {
    const db = await migrated('bad-host.db')
    expectOneLine(await cli('serve', '--db', db, '--host', '999.1.1.1', '--port', '0'), 2, '--host 999.1.1.1 is neither an IP address nor a host name that resolves')
    expect(existsSync(`${db}.webhook-key`)).toBe(false)
  })

  it('an option the plugin refuses at registration leaves no key file either', async () => {
    const db = await migrated('bad-schedule.db')
    const result = await cli('serve', '--db', db, '--port', '0', '--webhook-retry-schedule', Array.from({ length: 51 }, () => '1s').join(','))
    expectOneLine(result, 2, 'webhookOptions.retrySchedule')
    expect(existsSync(`${db}.webhook-key`)).toBe(false)
  })

  it.skipIf(!hasScript)('on a terminal: the same one line, nothing else', async () => {
    const db = await migrated('busy-terminal.db')
    const busy = await occupiedPort()
    holder = busy.server
    const child = inTerminal([process.execPath, CLI, 'serve', '--db', db, '--port', String(busy.port)], cleanEnv())
    child.stdin.end()
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    expect(code).toBe(1)
    expect(out.trim().split(/\r?\n/)).toEqual([`workforce-api: 127.0.0.1:${busy.port} is already in use (another server listens there): stop it, or pick another port with --port <n> (--port 0 takes any free one)`])
  })

  it('once it listens, it writes the key file and says so', async () => {
    const db = await migrated('listens.db')
    const { child } = await spawnUntil('serve', process.execPath, [CLI, 'serve', '--db', db, '--port', '0'], { env: cleanEnv(), until: /listening on/ })
    try {
      await expect.poll(() => existsSync(`${db}.webhook-key`)).toBe(true)
    } finally {
      await killed(child)
    }
  })
})

describe('serve: the reference page', () => {
  it('serves <prefix>/docs and names it when it starts', async () => {
    const db = await migrated('docs.db')
    const { child, match } = await spawnUntil('serve', process.execPath, [CLI, 'serve', '--db', db, '--port', '0'], {
      env: cleanEnv(),
      until: /API reference: (http:\/\/\S+\/api\/public\/docs)/,
    })
    try {
      const page = await fetch(match[1] as string)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toContain('text/html')
      expect(await page.text()).toContain('swagger')
    } finally {
      await killed(child)
    }
  })

  it('without @fastify/swagger-ui still starts, and /docs says in the envelope what to install', async () => {
    const db = await migrated('no-docs.db')
    // Resolves `@fastify/swagger-ui` as a project without it would: not found.
    const hook = `export async function resolve(specifier, context, next) {
      if (specifier === '@fastify/swagger-ui') throw Object.assign(new Error('Cannot find package @fastify/swagger-ui'), { code: 'ERR_MODULE_NOT_FOUND' })
      return next(specifier, context)
    }`
    const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)})`
    const child = spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, CLI, 'serve', '--db', db, '--port', '0'], {
      env: cleanEnv({ LOG_LEVEL: 'warn' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    try {
      let stdout = ''
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString()
          const found = /listening on (\S+) /.exec(stdout)
          if (found !== null) resolve(found[1] as string)
        })
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stdout}${stderr}`)))
      })
      expect(stdout).not.toContain('API reference:')
      const answer = await fetch(`${url}/api/public/docs`)
      expect(answer.status).toBe(404)
      const body = (await answer.json()) as { error: { code: string; message: string; status: number } }
      expect(body.error).toMatchObject({ code: 'not_found', status: 404 })
      expect(body.error.message).toContain('install @fastify/swagger-ui')
      expect((await fetch(`${url}/api/public/openapi.json`)).status).toBe(200)
      await expect.poll(() => stderr).toContain('the API reference page (/api/public/docs) is off: it needs the optional package @fastify/swagger-ui')
    } finally {
      await killed(child)
    }
  })
})

describe('webhooks: refused input leaves no key file', () => {
  it('an http:// URL names --allow-private, exit 2, before anything is opened', async () => {
    const db = await seeded('hooks.db')
    expectOneLine(
      await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'http://127.0.0.1:9/hook', '--events', 'all'),
      2,
      '--url must be an https URL, got "http://127.0.0.1:9/hook"',
      'add --allow-private',
    )
    expect(existsSync(`${db}.webhook-key`)).toBe(false)
  })

  it('a private https address names --allow-private too; a malformed URL does not', async () => {
    const db = await seeded('hooks-private.db')
    expectOneLine(await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://10.0.0.1/hook', '--events', 'all'), 2, 'non-public address', '--allow-private')
    const malformed = await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'not a url', '--events', 'all')
    expectOneLine(malformed, 2, '--url must be an absolute URL')
    expect(malformed.stderr).not.toContain('--allow-private')
    expect(existsSync(`${db}.webhook-key`)).toBe(false)
  })

  it.each([
    ['unknown event types', ['create', '--company', '1', '--url', 'http://127.0.0.1:9/x', '--events', 'todos.exploded', '--allow-private'], 2],
    ['an unknown company', ['create', '--company', '99', '--url', 'http://127.0.0.1:9/x', '--events', 'all', '--allow-private'], 1],
    ['an endpoint that does not exist (rotate)', ['rotate', '--id', `we_${'a'.repeat(24)}`], 1],
  ])('%s: refused, no key file', async (_name, args, code) => {
    const db = await seeded(`hooks-${code}-${args[0]}-${args[2]}.db`)
    const result = await cli('webhooks', args[0] as string, '--db', db, ...args.slice(1))
    expect(result.code, result.stderr).toBe(code)
    expect(existsSync(`${db}.webhook-key`)).toBe(false)
  })

  it('list needs no secret: it creates no key file; create then does', async () => {
    const db = await seeded('hooks-list.db')
    expect((await cli('webhooks', 'list', '--db', db, '--company', '1')).code).toBe(0)
    expect(existsSync(`${db}.webhook-key`)).toBe(false)
    const created = await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'http://127.0.0.1:9/x', '--events', 'all', '--allow-private')
    expect(created.code, created.stderr).toBe(0)
    expect(created.stderr).toContain(`created the webhook secret key ${db}.webhook-key`)
    expect(existsSync(`${db}.webhook-key`)).toBe(true)
  })
})

describe('--json prints one JSON object and nothing else', () => {
  let db: string
  let keyId: string
  beforeAll(async () => {
    db = await seeded('json.db')
    const created = await cli('keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--json')
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout.trimEnd().split('\n')).toHaveLength(1)
    keyId = (JSON.parse(created.stdout) as { key_id: string }).key_id
  })

  /** stdout is exactly one line, and it is JSON. */
  function onlyJson(result: CliResult): any {
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.endsWith('\n')).toBe(true)
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines, result.stdout).toHaveLength(1)
    return JSON.parse(lines[0] as string)
  }

  it.each([
    ['keys list', () => ['keys', 'list', '--db', db, '--json'], 'keys'],
    ['keys list --company', () => ['keys', 'list', '--db', db, '--company', '1', '--json'], 'keys'],
    ['keys disable', () => ['keys', 'disable', '--db', db, '--key-id', keyId, '--json'], 'key'],
    ['keys enable', () => ['keys', 'enable', '--db', db, '--key-id', keyId, '--json'], 'key'],
    ['modules set', () => ['modules', 'set', '--db', db, '--company', '1', '--module', 'todo', '--active', 'true', '--json'], 'module'],
    ['webhooks list', () => ['webhooks', 'list', '--db', db, '--company', '1', '--json'], 'endpoints'],
    ['migrate', () => ['migrate', '--db', db, '--json'], 'applied'],
  ])('%s', async (_name, args, field) => {
    expect(onlyJson(await cli(...args()))).toHaveProperty(field)
  })

  it('seed', async () => {
    expect(onlyJson(await cli('seed', '--db', join(dir, 'json-seed.db'), '--json')).companies).toHaveLength(3)
  })

  it('keys list without --json is the table alone', async () => {
    const listed = await cli('keys', 'list', '--db', db)
    expect(listed.stdout).toContain(keyId)
    expect(listed.stdout).not.toContain('{')
  })
})

/** An API that refuses every key, keeping the Authorization header it was sent. */
async function refusingApi(): Promise<{ url: string; seen: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const seen: IncomingHttpHeaders[] = []
  const server = createHttpServer((request, response) => {
    seen.push(request.headers)
    response.writeHead(401, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ error: { code: 'unauthorized', message: 'Invalid or missing API key', status: 401 } }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}/api/public`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

describe('npm run sync-client: the key off the command line', () => {
  const KEY = `owk_${'a'.repeat(16)}_${'b'.repeat(64)}`
  let api: Awaited<ReturnType<typeof refusingApi>>
  beforeAll(async () => {
    api = await refusingApi()
  })
  afterAll(() => api.close())

  it('from WORKFORCE_API_KEY: npm echoes no key, and the API gets it', async () => {
    const db = join(dir, 'env-mirror.db')
    const failed = await run('npm', ['run', 'sync-client', '--', '--url', api.url, '--db', db], { cwd: ROOT, env: cleanEnv({ WORKFORCE_API_KEY: KEY }) }).then(
      ({ stdout, stderr }): CliResult => ({ code: 0, stdout, stderr }),
      (error: CliResult) => error,
    )
    expect(failed.code).toBe(1)
    expect(failed.stdout + failed.stderr).toContain('> tsx examples/sync-client/main.ts --url')
    expect(failed.stdout + failed.stderr).not.toContain(KEY)
    expect(failed.stderr).toContain('401 unauthorized')
    expect(api.seen.at(-1)?.authorization).toBe(`Bearer ${KEY}`)
  })

  it('--key on the command line works, with a warning that it shows in the process list and npm\'s echo', async () => {
    const result = await runNode([SYNC_CLIENT, '--url', api.url, '--key', KEY, '--db', join(dir, 'flag-mirror.db')], { script: TSX, env: cleanEnv() })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^sync-client: warning: a key given with --key is visible to other users in the process list, and npm prints it with the script line; set WORKFORCE_API_KEY instead, or pass --key - /)
    expect(api.seen.at(-1)?.authorization).toBe(`Bearer ${KEY}`)
  })

  it('--key - reads it from a pipe, without the warning; an empty one is refused', async () => {
    const piped = spawn(TSX, [SYNC_CLIENT, '--url', api.url, '--key', '-', '--db', join(dir, 'pipe-mirror.db')], { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    piped.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    piped.stdin.end(`${KEY}\n`)
    expect(await new Promise((resolve) => piped.once('exit', resolve))).toBe(1)
    expect(stderr).not.toContain('warning')
    expect(stderr).toContain('401 unauthorized')
    expect(api.seen.at(-1)?.authorization).toBe(`Bearer ${KEY}`)

    const empty = spawn(TSX, [SYNC_CLIENT, '--url', api.url, '--key', '-'], { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
    let refusal = ''
    empty.stderr.on('data', (chunk: Buffer) => (refusal += chunk.toString()))
    empty.stdin.end()
    expect(await new Promise((resolve) => empty.once('exit', resolve))).toBe(2)
    expect(refusal).toBe('sync-client: --key -: no key on standard input\n')
  })

  it.skipIf(!hasScript)('--key - on a terminal asks for the key and does not echo it', async () => {
    const before = api.seen.length
    const child = inTerminal([TSX, SYNC_CLIENT, '--url', api.url, '--key', '-', '--db', join(dir, 'tty-mirror.db')], cleanEnv())
    let screen = ''
    let typed = false
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString()
      // Typed once the prompt is up (and the terminal's echo off), as a person would.
      if (!typed && screen.includes('API key (not shown as you type): ')) {
        typed = true
        child.stdin.write(`${KEY}\r`)
      }
    })
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    expect(code, screen).toBe(1)
    expect(screen).not.toContain(KEY)
    expect(screen).toContain('401 unauthorized')
    expect(api.seen.slice(before).map((headers) => headers.authorization)).toContain(`Bearer ${KEY}`)
  })
})
