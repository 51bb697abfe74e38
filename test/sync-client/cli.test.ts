import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { runCli, USAGE } from '../../examples/sync-client/cli.js'
import { Mirror } from '../../examples/sync-client/mirror.js'
import { LIST_RESOURCES } from '../../examples/sync-client/resources.js'
import { freePort } from '../helpers/free-port.js'
import { listAll, startApiServer, type ApiServer } from './api-server.js'

/** A stream that keeps what is written to it. */
function capture(): Writable & { text(): string } {
  let text = ''
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8')
      done()
    },
  })
  return Object.assign(stream, { text: () => text })
}

describe('npm run sync-client', () => {
  let server: ApiServer | undefined
  let directory: string

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'sync-cli-'))
  })
  afterEach(async () => {
    await server?.close()
    server = undefined
    rmSync(directory, { recursive: true, force: true })
  })

  async function run(argv: string[], env: NodeJS.ProcessEnv = {}) {
    const stdout = capture()
    const stderr = capture()
    const code = await runCli(argv, { stdout, stderr, env, progress: false, sleep: async () => {} })
    return { code, stdout: stdout.text(), stderr: stderr.text() }
  }

  it('--help prints the usage and exits 0', async () => {
    expect(await run(['--help'])).toEqual({ code: 0, stdout: USAGE, stderr: '' })
    expect(USAGE).toMatch(/--url .*--key .*--db .*--full/s)
  })

  it.each([
    [['--url', 'http://127.0.0.1:1/api/public'], 2, /^sync-client: --key is required \(or set WORKFORCE_API_KEY\); see --help\n$/],
    [['--key', 'owk_x'], 2, /^sync-client: --url is required/],
    [['--url', 'x', '--key', 'k', '--verbose'], 2, /^sync-client: Unknown option '--verbose'; see --help\n$/],
    [['--url', 'ftp://example.com', '--key', 'k'], 1, /^sync-client: not an http\(s\) URL: ftp:\/\/example.com\n$/],
    [['--url', 'http://127.0.0.1:1/api/public/v1', '--key', 'k'], 1, /^sync-client: give the URL without \/v1: http:\/\/127.0.0.1:1\/api\/public\n$/],
  ])('refuses %j with one line and exit code %i', async (argv, code, message) => {
    const result = await run(argv)
    expect(result.code).toBe(code)
    expect(result.stderr).toMatch(message)
    expect(result.stdout).toBe('')
  })

  it('mirrors everything, then follows the events feed, printing a summary per resource; a bad key is one line and exit 1', async () => {
    server = await startApiServer()
    const db = join(directory, 'mirror.db')
    const args = ['--url', server.baseUrl, '--db', db]

    const first = await run([...args, '--key', server.key])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    expect(first.stdout).toMatch(/^full sync \(first run\): cursor first, then every list$/m)
    for (const { name } of LIST_RESOURCES) expect(first.stdout).toMatch(new RegExp(`^${name} +list +40 +1 +0 +40 +0$`, 'm'))
    // The cursor, the company, one page of each list, one page of the feed.
    expect(first.stdout).toMatch(/^321 records in 9 pages, 0 events in 1 feed pages, 11 requests \(0 retries, 0 not modified\), \d+\.\d s; mirror: .*mirror\.db$/m)

    // A change, then a run with the key from the environment: only the feed, and the roles.
    const todo = await fetch(`${server.baseUrl}/v1/todos`, {
      method: 'POST',
      headers: { 'x-api-key': server.key, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'From the CLI test', list_id: 1, assigned_to: 1 }),
    })
    expect(todo.status, await todo.clone().text()).toBe(201)
    const second = await run(args, { WORKFORCE_API_KEY: server.key })
    expect(second.code).toBe(0)
    expect(second.stdout).toMatch(/^followed the events feed$/m)
    expect(second.stdout).toMatch(/^users +feed +0 +0 +0 +0 +0$/m)
    expect(second.stdout).toMatch(/^todos +feed +0 +0 +1 +1 +0$/m)
    expect(second.stdout).toMatch(/^roles +list +40 +1 +0 +0 +0$/m)
    // The company and the one roles page were asked again with their ETags, and not modified.
    expect(second.stdout).toMatch(/ requests \(0 retries, 2 not modified\), /)

    const mirror = Mirror.open(db)
    try {
      expect(mirror.ids('todos')).toEqual((await listAll(server, '/v1/todos')).records.map((r) => r.id))
    } finally {
      mirror.close()
    }

    const refused = await run([...args, '--key', `owk_${'0'.repeat(16)}_${'0'.repeat(64)}`])
    expect(refused).toEqual({ code: 1, stdout: '', stderr: 'sync-client: GET /v1/company: 401 unauthorized (Invalid or missing API key): check --key\n' })
  })

  it('a key that cannot read a resource it mirrors is refused in one line, not silently given fewer events', async () => {
    server = await startApiServer()
    const db = join(directory, 'mirror.db')
    const narrow = await server.t.keyFor(1, ['company:read', 'users:read'])
    const result = await run(['--url', server.baseUrl, '--db', db, '--key', narrow])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^sync-client: GET \/v1\/employees: 403 forbidden .*: the key must read every resource it mirrors, and their events\n$/)
  })

  it('names an unreachable server in one line', async () => {
    const port = await freePort()
    const result = await run(['--url', `http://127.0.0.1:${port}/api/public`, '--key', 'owk_x', '--db', join(directory, 'm.db')])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^retrying GET \/api\/public\/v1\/events\/cursor in \d+ s \(no response\)\n/)
    expect(result.stderr.split('\n').at(-2)).toBe('sync-client: cannot connect to the API: connection refused (is the server running, on this port?)')
  })
})
