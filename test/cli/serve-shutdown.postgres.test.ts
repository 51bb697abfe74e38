import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { afterEach, expect, it } from 'vitest'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { checkedFetch } from '../helpers/checked-fetch.js'

// The built CLI as an operator runs it: health routes, --rate-limit, and SIGTERM while a write is in flight.
const CLI = join(import.meta.dirname, '../../dist/cli.js')
const run = promisify(execFile)

function start(args: string[]): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'error' } })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(out)
      if (match !== null) resolve({ child, url: match[1] as string, exited })
    })
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${out}`)))
  })
}

describePostgres('serve on Postgres: health, rate limit flags, graceful shutdown', () => {
  const database = useTestDatabase()
  const children: ChildProcess[] = []
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  })

  it('answers health checks, applies --rate-limit, and on SIGTERM finishes the in-flight write, then exits 0', async () => {
    const db = database.current.url
    await run(process.execPath, [CLI, 'seed', '--db', db])
    const created = await run(process.execPath, [CLI, 'keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--json'])
    const { key } = JSON.parse(created.stdout.trim().split('\n').pop() as string) as { key: string }
    const server = await start(['--db', db, '--port', '0', '--rate-limit', '3', '--rate-limit-window', '1m'])
    children.push(server.child)

    expect((await checkedFetch(`${server.url}/health/live`)).status).toBe(200)
    expect(await (await checkedFetch(`${server.url}/health/ready`)).json()).toEqual({ status: 'ready', storage: 'ok' })

    const api = `${server.url}/api/public/v1`
    const first = await checkedFetch(`${api}/todos?per_page=1`, { headers: { 'x-api-key': key } })
    expect(first.headers.get('x-ratelimit-limit')).toBe('3')
    await first.arrayBuffer()

    // One write held on a lock, in flight when SIGTERM arrives.
    const locker = new pg.Client({ connectionString: db })
    await locker.connect()
    try {
      await locker.query('begin')
      await locker.query('lock table wfa_todos in access exclusive mode')
      const write = checkedFetch(`${api}/todos`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Finished during shutdown', list_id: 1, assigned_to: 1 }),
      })
      for (let i = 0; ; i++) {
        const { rows } = await locker.query<{ n: number }>("select count(*)::int as n from pg_locks where relation = 'wfa_todos'::regclass and not granted")
        if ((rows[0]?.n ?? 0) > 0) break
        if (i > 100) throw new Error('the write never reached the to-dos table')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      server.child.kill('SIGTERM')
      await new Promise((resolve) => setTimeout(resolve, 300))
      // Still running: it waits for the write. New connections are no longer accepted.
      expect(server.child.exitCode).toBeNull()
      await locker.query('rollback')
      const response = await write
      expect(response.status).toBe(201)
      expect(((await response.json()) as { data: { title: string } }).data.title).toBe('Finished during shutdown')
    } finally {
      await locker.end()
    }
    expect(await server.exited).toBe(0)
  }, 30_000)

  it('refuses a --redis that is not a redis:// URL', async () => {
    const failed = await run(process.execPath, [CLI, 'serve', '--db', database.current.url, '--redis', 'localhost:6379']).catch((error: { code: number; stderr: string }) => error)
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining('--redis must be a redis:// URL') })
  })
})
