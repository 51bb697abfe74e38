import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { exclusiveMemberIds, listIds } from '../helpers/seed-facts.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'
import { lastJson, runNode, type CliResult as Result } from '../helpers/cli.js'
import { checkedFetch } from '../helpers/checked-fetch.js'

// Drives the built CLI (`npm test` builds first), exactly as an operator or a script would.
const CLI = join(import.meta.dirname, '../../dist/cli.js')
const KEY_ENV = 'WORKFORCE_WEBHOOK_KEY'

/** The environment of every command: no webhook key unless a test sets one. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...extra }
  if (extra[KEY_ENV] === undefined) delete env[KEY_ENV]
  return env
}

const cliWith = (env: NodeJS.ProcessEnv, args: string[]) => runNode(args, { env })

const cli = (...args: string[]) => cliWith(cliEnv(), args)

/** Runs the command, expects exit 0, and returns its last stdout line as JSON. */
async function ok(...args: string[]): Promise<any> {
  const result = await cli(...args)
  expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(0)
  return lastJson(result.stdout)
}

let dir: string
const SECRET = /^whsec_([A-Za-z0-9+/]{43}=)$/

async function seededDb(name: string): Promise<string> {
  const db = join(dir, name)
  const seeded = await cli('seed', '--db', db)
  expect(seeded.code, seeded.stderr).toBe(0)
  return db
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wfa-webhooks-cli-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('workforce-api webhooks', () => {
  let db: string
  beforeAll(async () => {
    db = await seededDb('webhooks.db')
  })

  it('create prints the endpoint, then {"id","secret"} as the last line; the db holds the secret sealed', async () => {
    const created = await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/hooks', '--events', 'todos.created,users.updated', '--allow-private', '--description', 'ops')
    expect(created.code, created.stderr).toBe(0)
    const lines = created.stdout.trim().split('\n')
    expect(lines.length).toBeGreaterThan(1)
    expect(lines[0]).toContain('https://127.0.0.1/hooks')
    const { id, secret, ...rest } = lastJson(created.stdout)
    expect(rest).toEqual({})
    expect(id).toMatch(/^we_[a-z2-7]{24}$/)
    expect(secret).toMatch(SECRET)
    expect(Buffer.from(SECRET.exec(secret)![1]!, 'base64')).toHaveLength(32)

    const sqlite = new Database(db, { readonly: true })
    try {
      const row = sqlite.prepare('select secret from wfa_webhook_endpoints where id = ?').get(id) as { secret: string }
      expect(row.secret).toMatch(/^v1\./)
      expect(row.secret).not.toContain(secret)
      expect(row.secret).not.toContain(secret.slice('whsec_'.length, -1))
    } finally {
      sqlite.close()
    }
  })

  it('create --json prints only the JSON; --events all subscribes to every type', async () => {
    const created = await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'http://127.0.0.1:9/all', '--events', 'all', '--allow-private', '--json')
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout.trim().split('\n')).toHaveLength(1)
    const { id } = lastJson(created.stdout)
    const { endpoints } = await ok('webhooks', 'list', '--db', db, '--company', '1', '--json')
    expect(endpoints.find((endpoint: { id: string }) => endpoint.id === id).events).toEqual(['*'])
  })

  it('list --json gives every endpoint of the company with ISO timestamps and never a secret; without --json a table', async () => {
    const { id, secret } = await ok('webhooks', 'create', '--db', db, '--company', '2', '--url', 'https://127.0.0.1/two', '--events', 'users.created', '--allow-private')
    const listed = await cli('webhooks', 'list', '--db', db, '--company', '2', '--json')
    expect(listed.code).toBe(0)
    expect(listed.stdout).not.toContain(secret.slice('whsec_'.length))
    const { endpoints } = lastJson(listed.stdout)
    expect(endpoints).toEqual([
      {
        id,
        company_id: 2,
        url: 'https://127.0.0.1/two',
        description: null,
        events: ['users.created'],
        status: 'enabled',
        disabled_reason: null,
        failing_since: null,
        consecutive_failures: 0,
        paused_until: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    ])
    const table = await cli('webhooks', 'list', '--db', db, '--company', '2')
    expect(table.stdout).toMatch(/^ID\s+STATUS\s+EVENTS\s+URL\s+CREATED/)
    expect(table.stdout).toContain(id)
    expect((await cli('webhooks', 'list', '--db', db, '--company', '3')).stdout).toContain('no webhook endpoints for company 3')
  })

  it('disable and enable change the status; rotate gives a new secret; delete leaves the list empty', async () => {
    const { id, secret } = await ok('webhooks', 'create', '--db', db, '--company', '3', '--url', 'https://127.0.0.1/three', '--events', 'all', '--allow-private')
    const status = async () => (await ok('webhooks', 'list', '--db', db, '--company', '3', '--json')).endpoints[0]
    expect((await ok('webhooks', 'disable', '--db', db, '--id', id, '--json')).endpoint).toMatchObject({ id, status: 'disabled', disabled_reason: 'manual' })
    expect(await status()).toMatchObject({ status: 'disabled', disabled_reason: 'manual' })
    expect((await ok('webhooks', 'enable', '--db', db, '--id', id, '--json')).endpoint).toMatchObject({ id, status: 'enabled', disabled_reason: null })
    expect(await status()).toMatchObject({ status: 'enabled' })

    const rotated = await cli('webhooks', 'rotate', '--db', db, '--id', id)
    expect(rotated.code, rotated.stderr).toBe(0)
    expect(rotated.stdout).toContain('24 hours')
    const next = lastJson(rotated.stdout)
    expect(next.id).toBe(id)
    expect(next.secret).toMatch(SECRET)
    expect(next.secret).not.toBe(secret)

    expect(await ok('webhooks', 'delete', '--db', db, '--id', id, '--json')).toEqual({ id, deleted: true })
    expect(await ok('webhooks', 'list', '--db', db, '--company', '3', '--json')).toEqual({ endpoints: [] })
    const again = await cli('webhooks', 'delete', '--db', db, '--id', id)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`No webhook endpoint with id ${id}`)
  })

  it('refuses a loopback destination unless --allow-private', async () => {
    const refused = await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/hooks', '--events', 'all')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('non-public address')
    expect(refused.stderr).not.toMatch(/\n\s+at /)
    const accepted = await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/hooks', '--events', 'all', '--allow-private')
    expect(accepted.code, accepted.stderr).toBe(0)
  })

  it('usage errors exit 2 with one clear message; an unknown endpoint or company exits 1; never a stack trace', async () => {
    const cases: Array<[string[], number, string]> = [
      [['webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/h', '--events', 'todos.created,todos.exploded', '--allow-private'], 2, 'todos.exploded'],
      [['webhooks', 'create', '--db', db, '--company', '1', '--url', 'not a url', '--events', 'all'], 2, 'url'],
      [['webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/h', '--allow-private'], 2, 'missing --events'],
      [['webhooks', 'create', '--db', db, '--company', 'one', '--url', 'https://127.0.0.1/h', '--events', 'all'], 2, '--company must be a positive integer'],
      [['webhooks', 'create', '--db', db, '--company', '99', '--url', 'https://127.0.0.1/h', '--events', 'all', '--allow-private'], 1, 'no company with id 99'],
      [['webhooks', 'list', '--db', db], 2, 'missing --company'],
      [['webhooks', 'disable', '--db', db], 2, 'missing --id'],
      [['webhooks', 'disable', '--db', db, '--id', 'key_1'], 2, 'is not a webhook endpoint id'],
      [['webhooks', 'enable', '--db', db, '--id', 'we_aaaaaaaaaaaaaaaaaaaaaaaa'], 1, 'No webhook endpoint with id we_aaaaaaaaaaaaaaaaaaaaaaaa'],
      [['webhooks', 'deliveries', '--db', db, '--id', 'we_aaaaaaaaaaaaaaaaaaaaaaaa', '--limit', '0'], 2, '--limit must be a positive integer'],
      [['webhooks', 'list', '--db', db, '--company', '1', '--bogus'], 2, 'unknown flag --bogus'],
      [['webhooks', 'frobnicate', '--db', db], 2, 'unknown webhooks action "frobnicate"'],
    ]
    for (const [args, code, message] of cases) {
      const result = await cli(...args)
      expect(result.code, args.join(' ')).toBe(code)
      expect(result.stderr, args.join(' ')).toContain(message)
      expect(result.stderr, args.join(' ')).not.toMatch(/\n\s+at /)
    }
  })

  it('webhooks --help lists the actions and the key; serve --help the webhook flags', async () => {
    const webhooks = (await cli('webhooks', '--help')).stdout
    for (const text of ['create', 'list', 'rotate', 'deliveries', 'replay', KEY_ENV, '.webhook-key']) expect(webhooks).toContain(text)
    const serving = (await cli('serve', '--help')).stdout
    for (const text of ['--allow-private-webhooks', '--webhook-retry-schedule', '--no-dispatcher', KEY_ENV]) expect(serving).toContain(text)
  })
})

describe('the webhook secret key', () => {
  it('a SQLite database gets <db>.webhook-key (0600) on first use, said on stderr, and reused after', async () => {
    const db = await seededDb('keyed.db')
    const keyFile = `${db}.webhook-key`
    expect(existsSync(keyFile)).toBe(false)
    const first = await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/a', '--events', 'all', '--allow-private')
    expect(first.code, first.stderr).toBe(0)
    expect(first.stderr).toContain(keyFile)
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)
    const key = readFileSync(keyFile, 'utf8').trim()
    expect(Buffer.from(key, 'base64')).toHaveLength(32)

    const second = await cli('webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/b', '--events', 'all', '--allow-private')
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).toBe('')
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(key)
  })

  it(`${KEY_ENV} wins over the key file; a value that is not 32 bytes is a usage error`, async () => {
    const db = await seededDb('env-keyed.db')
    const env = cliEnv({ [KEY_ENV]: randomBytes(32).toString('base64') })
    const created = await cliWith(env, ['webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/a', '--events', 'all', '--allow-private'])
    expect(created.code, created.stderr).toBe(0)
    expect(existsSync(`${db}.webhook-key`)).toBe(false)
    const bad = await cliWith(cliEnv({ [KEY_ENV]: 'c2hvcnQ=' }), ['webhooks', 'list', '--db', db, '--company', '1'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(`${KEY_ENV} must be base64 of 32 bytes`)
  })

  it(`a Postgres URL without ${KEY_ENV} is a usage error that says how to set it (and never prints the password)`, async () => {
    const result = await cli('webhooks', 'list', '--db', 'postgres://admin:hunter2@127.0.0.1:1/nowhere', '--company', '1')
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(KEY_ENV)
    expect(result.stderr).toContain('openssl rand -base64 32')
    expect(result.stderr).not.toContain('hunter2')
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
  })
})

interface Server {
  child: ChildProcess
  url: string
  exited: Promise<number | null>
}

/** Starts `serve` on a free port and resolves once it listens. */
function serve(args: string[], env = cliEnv()): Promise<Server> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    let output = ''
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match !== null) resolve({ child, url: match[1] as string, exited })
    }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${output}`)))
  })
}

async function stop(server: Server): Promise<void> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM')
  await server.exited
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves with `read()` once `check` holds on it, polling for up to `timeoutMs`. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (check(value) || Date.now() > deadline) return value
    await sleep(100)
  }
}

async function postTodo(server: Server, apiKey: string, companyId: number, title: string): Promise<number> {
  const response = await checkedFetch(`${server.url}/api/public/v1/todos`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ title, list_id: listIds(companyId)[0], assigned_to: exclusiveMemberIds(companyId)[0] }),
  })
  expect(response.status, await response.clone().text()).toBe(201)
  return ((await response.json()) as { data: { id: number } }).data.id
}

// Each test here runs five to twenty processes one after another (seed, keys and webhooks
// commands, serve, then deliveries every 100 ms until it says delivered): seconds each on a
// loaded machine, where CI saw 30 s run out. The guard against a hang is 60 s; what is checked is
// bounded by the waits inside (10 s for the receiver, 10 s for the record).
describe('serve delivers to endpoints made by the CLI', { timeout: 60_000 }, () => {
  const servers: Server[] = []
  const receivers: Receiver[] = []
  afterEach(async () => {
    await Promise.all(servers.splice(0).map(stop))
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
  })

  async function setup(name: string) {
    const db = await seededDb(name)
    const receiver = await startReceiver()
    receivers.push(receiver)
    receiver.answer = () => ({ status: 200, body: 'thanks' })
    const { key } = await ok('keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--json')
    const { id, secret } = await ok('webhooks', 'create', '--db', db, '--company', '1', '--url', receiver.url, '--events', 'todos.created', '--allow-private')
    return { db, receiver, apiKey: key as string, id: id as string, secret: secret as string }
  }

  it('a to-do created through the API reaches the receiver, signed with the CLI\'s secret; deliveries shows it delivered', async () => {
    const { db, receiver, apiKey, id, secret } = await setup('deliver.db')
    const server = await serve(['--db', db, '--allow-private-webhooks', '--webhook-retry-schedule', '1s'])
    servers.push(server)
    const todoId = await postTodo(server, apiKey, 1, 'Inspect the crane')

    const [request] = await receiver.waitFor(1, 10_000)
    const payload = new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>) as { type: string; data: { id: number } }
    expect(payload).toMatchObject({ type: 'todos.created', data: { id: todoId } })

    const page = await eventually(
      () => ok('webhooks', 'deliveries', '--db', db, '--id', id, '--json'),
      (found) => found.deliveries[0]?.status === 'delivered',
    )
    expect(page.has_more).toBe(false)
    expect(page.deliveries).toHaveLength(1)
    const [delivery] = page.deliveries
    expect(delivery).toMatchObject({ endpoint_id: id, event_id: request!.headers['webhook-id'], event_type: 'todos.created', status: 'delivered', attempts: 1, next_attempt_at: null })
    expect(delivery.created_at).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/)
    expect(delivery.attempts_made).toEqual([
      expect.objectContaining({ number: 1, status_code: 200, succeeded: true, error: null, attempted_at: expect.stringMatching(/Z$/) }),
    ])

    const human = await cli('webhooks', 'deliveries', '--db', db, '--id', id)
    expect(human.stdout).toContain('delivered')
    expect(human.stdout).toContain('HTTP 200')
  })

  it('serve --no-dispatcher records the delivery but never sends it; an instance with the dispatcher sends it', async () => {
    const { db, receiver, apiKey, id } = await setup('no-dispatcher.db')
    const apiOnly = await serve(['--db', db, '--allow-private-webhooks', '--no-dispatcher'])
    servers.push(apiOnly)
    await postTodo(apiOnly, apiKey, 1, 'Order cement')
    // Longer than the default poll interval (1 s): a running dispatcher would have sent it by now.
    await sleep(1_500)
    expect(receiver.received).toHaveLength(0)
    const pending = await ok('webhooks', 'deliveries', '--db', db, '--id', id, '--json')
    expect(pending.deliveries.map((delivery: { status: string; attempts: number }) => [delivery.status, delivery.attempts])).toEqual([['pending', 0]])

    const delivering = await serve(['--db', db, '--allow-private-webhooks'])
    servers.push(delivering)
    await receiver.waitFor(1, 10_000)
    const done = await eventually(
      () => ok('webhooks', 'deliveries', '--db', db, '--id', id, '--json'),
      (found) => found.deliveries[0]?.status === 'delivered',
    )
    expect(done.deliveries[0]).toMatchObject({ status: 'delivered', attempts: 1 })
  })

  it('a bad --webhook-retry-schedule is a usage error', async () => {
    const result = await cli('serve', '--db', join(dir, 'never.db'), '--webhook-retry-schedule', '5s,soon')
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--webhook-retry-schedule')
    expect(result.stderr).toContain('"soon"')
    expect(existsSync(join(dir, 'never.db'))).toBe(false)
  })
})
