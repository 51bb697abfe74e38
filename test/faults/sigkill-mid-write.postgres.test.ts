import { execFile, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { afterEach, expect, it } from 'vitest'
import { killed, spawnUntil } from '../helpers/child-process.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { checkedFetch } from '../helpers/checked-fetch.js'

// The built CLI as an operator runs it, killed with SIGKILL while a write waits on a lock.
const CLI = join(import.meta.dirname, '../../dist/cli.js')
const run = promisify(execFile)
/** The default lease (docs/decisions.md): how long a dead request may block its key. */
const LEASE_MS = 10_000

async function startServer(db: string): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  // Warnings too: a 503's cause (StorageUnavailable) is logged at warn, never sent to the client.
  const env = { ...process.env, LOG_LEVEL: 'warn' }
  const { child, match, output } = await spawnUntil('serve', process.execPath, [CLI, 'serve', '--db', db, '--port', '0'], { env, until: /listening on (http:\/\/\S+)/ })
  return { child, url: `${match[1]}/api/public/v1`, output }
}

describePostgres('a server killed (SIGKILL) in the middle of a write', () => {
  const database = useTestDatabase()
  const children: ChildProcess[] = []
  afterEach(async () => {
    for (const child of children.splice(0)) await killed(child)
  })

  it('loses nothing, duplicates nothing, and frees the Idempotency-Key within the lease', async () => {
    const db = database.current.url
    await run(process.execPath, [CLI, 'seed', '--db', db])
    const created = await run(process.execPath, [CLI, 'keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--json'])
    const { key } = JSON.parse(created.stdout.trim().split('\n').pop() as string) as { key: string }
    const title = `Written once ${Date.now()}`
    const post = (url: string) =>
      checkedFetch(`${url}/todos`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': 'kill-me', 'content-type': 'application/json' },
        body: JSON.stringify({ title, list_id: 1, assigned_to: 1 }),
      })

    const first = await startServer(db)
    children.push(first.child)
    // Hold the to-dos table: the request claims its Idempotency-Key, then its insert waits.
    const locker = new pg.Client({ connectionString: db })
    await locker.connect()
    try {
      await locker.query('begin')
      await locker.query('lock table wfa_todos in access exclusive mode')
      const inFlight = post(first.url).catch((error: unknown) => error)
      // Wait until the server's insert is queued behind our lock.
      for (let i = 0; ; i++) {
        const { rows } = await locker.query<{ waiting: number }>(
          "select count(*)::int as waiting from pg_locks where relation = 'wfa_todos'::regclass and not granted",
        )
        if ((rows[0]?.waiting ?? 0) > 0) break
        if (i > 100) throw new Error('the write never reached the to-dos table')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      await killed(first.child)
      await inFlight // the client sees the connection die: no answer, so it will retry
      await locker.query('rollback')
    } finally {
      await locker.end()
    }
    const killedAt = Date.now()

    const second = await startServer(db)
    children.push(second.child)
    // Within the lease the key still says "in flight", with a Retry-After; then the retry runs.
    const statuses: number[] = []
    let success: Response | undefined
    while (Date.now() - killedAt < LEASE_MS + 5_000) {
      const response = await post(second.url)
      statuses.push(response.status)
      if (response.status === 201) {
        success = response
        break
      }
      // Says what came before, what the server answered and what it logged, should anything but 409 come back.
      const seen =
        response.status === 409 ? '' : `answers so far, this one last: ${statuses.join(',')}; its body: ${await response.clone().text()}; the server logged: ${second.output().slice(-4000)}`
      expect(response.status, seen).toBe(409)
      expect(response.headers.get('retry-after')).toBe('1')
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
    const freedAfterMs = Date.now() - killedAt
    console.log(`[sigkill] Idempotency-Key usable again ${freedAfterMs} ms after the kill (lease ${LEASE_MS} ms); answers: ${statuses.join(',')}`)
    expect(success?.status).toBe(201)
    expect(freedAfterMs).toBeLessThan(LEASE_MS + 5_000)
    const body = await (success as Response).text()
    const replay = await post(second.url)
    expect(replay.headers.get('idempotent-replay')).toBe('true')
    expect(await replay.text()).toBe(body)

    // Exactly one to-do with that title: the killed request's insert never committed.
    const check = new pg.Client({ connectionString: db })
    await check.connect()
    try {
      const { rows } = await check.query<{ n: number }>('select count(*)::int as n from wfa_todos where title = $1', [title])
      expect(rows[0]?.n).toBe(1)
    } finally {
      await check.end()
    }
  }, 60_000)
})
