import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lastJson, runNode, type CliResult as Result } from '../helpers/cli.js'
import { checkedFetch } from '../helpers/checked-fetch.js'

// Drives the built CLI (`npm test` builds first), exactly as a user or a script would.
const CLI = join(import.meta.dirname, '../../dist/cli.js')

const cli = (...args: string[]) => runNode(args)

let dir: string
let db: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wfa-cli-'))
  db = join(dir, 'cli.db')
  const seeded = await cli('seed', '--db', db, '--json')
  expect(seeded.code, seeded.stderr).toBe(0)
})

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('workforce-api CLI', () => {
  it('seed --json prints the companies as the last stdout line', async () => {
    const other = join(dir, 'other.db')
    const result = await cli('seed', '--db', other, '--json')
    expect(result.code).toBe(0)
    expect(lastJson(result.stdout)).toEqual({
      companies: [
        { id: 1, name: 'Rossi Costruzioni S.r.l.', timezone: 'Europe/Rome' },
        { id: 2, name: 'Hudson Staffing Inc.', timezone: 'America/New_York' },
        { id: 3, name: 'Empty Co', timezone: 'Asia/Tokyo' },
      ],
    })
  })

  it('seed refuses a database that already holds the seed data', async () => {
    const result = await cli('seed', '--db', db)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('already holds seed data')
  })

  it('keys create prints a usable key once; keys list never shows it', async () => {
    const created = await cli('keys', 'create', '--db', db, '--company', '1', '--scopes', 'users:read,company:read', '--name', 'ci', '--json')
    expect(created.code, created.stderr).toBe(0)
    const { key, key_id } = lastJson(created.stdout)
    expect(key).toMatch(/^owk_[0-9a-f]{16}_[0-9a-f]{64}$/)
    expect(key).toBe(`owk_${key_id}_${key.slice(21)}`)

    const listed = await cli('keys', 'list', '--db', db, '--company', '1', '--json')
    expect(listed.code).toBe(0)
    expect(listed.stdout).not.toContain(key.slice(21))
    const entry = lastJson(listed.stdout).keys.find((k: { key_id: string }) => k.key_id === key_id)
    expect(entry).toMatchObject({ key_id, company_id: 1, state: 'active', name: 'ci', scopes: ['users:read', 'company:read'] })
  })

  it('keys create --rate-limit stores the key\'s own budget, listed with the key', async () => {
    const { key_id } = lastJson((await cli('keys', 'create', '--db', db, '--company', '2', '--scopes', 'all', '--rate-limit', '42', '--json')).stdout)
    const listed = lastJson((await cli('keys', 'list', '--db', db, '--company', '2', '--json')).stdout)
    expect(listed.keys.find((entry: { key_id: string }) => entry.key_id === key_id)).toMatchObject({ key_id, rate_limit: 42 })
    const refused = await cli('keys', 'create', '--db', db, '--company', '2', '--scopes', 'all', '--rate-limit', '0')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('--rate-limit must be a positive integer')
  })

  it('keys disable, enable and revoke follow the lifecycle; a revoked key cannot be enabled', async () => {
    const { key_id } = lastJson((await cli('keys', 'create', '--db', db, '--company', '2', '--scopes', 'all', '--json')).stdout)
    expect(lastJson((await cli('keys', 'disable', '--db', db, '--key-id', key_id, '--json')).stdout).key.state).toBe('disabled')
    expect(lastJson((await cli('keys', 'enable', '--db', db, '--key-id', key_id, '--json')).stdout).key.state).toBe('active')
    expect(lastJson((await cli('keys', 'revoke', '--db', db, '--key-id', key_id, '--json')).stdout).key.state).toBe('revoked')
    const again = await cli('keys', 'enable', '--db', db, '--key-id', key_id)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('Cannot enable a key that is revoked')
  })

  it('rejects unknown flags, bad values and unknown scopes with a non-zero exit and a message', async () => {
    const cases: Array<[string[], string]> = [
      [['keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--bogus'], 'unknown flag --bogus'],
      [['keys', 'create', '--db', db, '--company', 'one', '--scopes', 'all'], '--company must be a positive integer'],
      [['keys', 'create', '--db', db, '--company', '1', '--scopes', 'users:reed'], 'Unknown scope "users:reed"'],
      [['keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--expires-at', 'tomorrow'], '--expires-at must be an ISO 8601'],
      [['keys', 'create', '--db', db, '--company', '99', '--scopes', 'all'], 'no company with id 99'],
      [['keys', 'disable', '--db', db, '--key-id', '0000000000000000'], 'No API key with id 0000000000000000'],
      [['modules', 'set', '--db', db, '--company', '1', '--module', 'payroll', '--active', 'true'], '--module must be one of'],
      [['modules', 'set', '--db', db, '--company', '1', '--module', 'todo', '--active', 'yes'], '--active must be true or false'],
      [['seed', '--db', db, '--scale', '10'], '--scale must be at least 40'],
      [['serve', '--db', db, '--port', 'http'], '--port must be an integer'],
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['seed'], 'missing --db'],
    ]
    for (const [args, message] of cases) {
      const result = await cli(...args)
      expect(result.code, args.join(' ')).not.toBe(0)
      expect(result.stderr, args.join(' ')).toContain(message)
    }
  })

  it('serve listens on the printed URL and answers with keys made by the CLI; modules set takes effect', async () => {
    const { key } = lastJson((await cli('keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--json')).stdout)
    const off = await cli('modules', 'set', '--db', db, '--company', '1', '--module', 'todo', '--active', 'false', '--json')
    expect(lastJson(off.stdout)).toEqual({ company_id: 1, module: 'todo', active: false })

    const server = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = ''
        server.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString()
          const match = /listening on (http:\/\/[^\s]+)/.exec(output)
          if (match) resolve(match[1] as string)
        })
        server.once('exit', (code) => reject(new Error(`serve exited with ${code}`)))
      })
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const users = await checkedFetch(`${url}/api/public/v1/users?per_page=2`, { headers: { 'x-api-key': key } })
      expect(users.status).toBe(200)
      const body = (await users.json()) as { data: Array<{ id: number }>; pagination: { total: number } }
      expect(body.data.map((user) => user.id)).toEqual([1, 2])
      expect(body.pagination.total).toBe(40)
      const todos = await checkedFetch(`${url}/api/public/v1/todos`, { headers: { authorization: `Bearer ${key}` } })
      expect(todos.status).toBe(403)
      expect(await todos.json()).toEqual({ error: { code: 'forbidden', message: 'The todo module is not active for this company', status: 403 } })
    } finally {
      server.kill('SIGTERM')
    }
  })
})
