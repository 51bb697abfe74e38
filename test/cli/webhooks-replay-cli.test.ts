import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { changeEvent } from '../../src/conformance/webhook-facts.js'
import { lastJson, runNode } from '../helpers/cli.js'

// Drives the built CLI (`npm test` builds first), as an operator filling a gap after an outage would.
const KEY_ENV = 'WORKFORCE_WEBHOOK_KEY'

function cli(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' }
  delete env[KEY_ENV]
  return runNode(args, { env })
}

async function ok(...args: string[]): Promise<any> {
  const result = await cli(...args)
  expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(0)
  return lastJson(result.stdout)
}

let dir: string
let db: string
/** An hour ago: the events are in the past, so `--until` may default to now. */
const BASE = Date.now() - 3_600_000
const at = (event: ReturnType<typeof changeEvent>, ms: number) => ({ ...event, occurred_at: new Date(BASE + ms) })
const events = {
  missed: at(changeEvent('cli replay: missed', 1, 'todos.created', 1), 0),
  missedLater: at(changeEvent('cli replay: missed later', 1, 'todos.created', 2), 1_000),
  otherType: at(changeEvent('cli replay: other type', 1, 'users.created', 3), 500),
  otherCompany: at(changeEvent('cli replay: other company', 2, 'todos.created', 4), 200),
  afterPeriod: at(changeEvent('cli replay: after the period', 1, 'todos.created', 5), 5_000),
}
const SINCE = new Date(BASE).toISOString()
const UNTIL = new Date(BASE + 2_000).toISOString()

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'wfa-webhooks-replay-cli-'))
  db = join(dir, 'replay.db')
  expect((await cli('seed', '--db', db)).code).toBe(0)
  // Recorded before any endpoint exists: an endpoint added now has missed them all.
  const adapter = await openSqliteAdapter({ filename: db })
  try {
    await adapter.writes.transaction(async (tx) => {
      for (const event of Object.values(events)) await tx.recordEvent(event)
    })
  } finally {
    await adapter.close()
  }
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('workforce-api webhooks replay', () => {
  it('queues the period’s missed events of the endpoint’s types and company, once; --json prints the count', async () => {
    const { id } = await ok('webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/hooks', '--events', 'todos.created', '--allow-private')
    expect(await ok('webhooks', 'replay', '--db', db, '--id', id, '--since', SINCE, '--until', UNTIL, '--json')).toEqual({ id, count: 2, since: SINCE, until: UNTIL })
    const { deliveries } = await ok('webhooks', 'deliveries', '--db', db, '--id', id, '--json')
    expect(deliveries.map((delivery: { event_id: string; status: string; attempts: number }) => [delivery.event_id, delivery.status, delivery.attempts]).sort()).toEqual(
      [
        [events.missed.id, 'pending', 0],
        [events.missedLater.id, 'pending', 0],
      ].sort(),
    )
    // Nothing left in that period: the same command queues nothing more.
    expect((await ok('webhooks', 'replay', '--db', db, '--id', id, '--since', SINCE, '--until', UNTIL, '--json')).count).toBe(0)
  })

  it('says in words how many it queued, and that a disabled endpoint gets them once enabled; --until defaults to now', async () => {
    const { id } = await ok('webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/hooks', '--events', 'all', '--allow-private')
    await ok('webhooks', 'disable', '--db', db, '--id', id, '--json')
    const result = await cli('webhooks', 'replay', '--db', db, '--id', id, '--since', SINCE)
    expect(result.code, result.stderr).toBe(0)
    // Every event of company 1 from SINCE on: the two to-dos, the user and the one after the period.
    expect(result.stdout).toContain(`4 event(s) from ${SINCE} until `)
    expect(result.stdout).toContain('sent once it is enabled')
  })

  it('refuses a missing or bad period with exit 2 and an unknown endpoint with exit 1, naming the problem', async () => {
    const unknown = `we_${'a'.repeat(24)}`
    const { id } = await ok('webhooks', 'create', '--db', db, '--company', '1', '--url', 'https://127.0.0.1/hooks', '--events', 'all', '--allow-private')
    const cases: Array<[string[], number, RegExp]> = [
      [['--id', id], 2, /missing --since/],
      [['--id', id, '--since', 'yesterday'], 2, /--since must be an ISO 8601 time/],
      [['--id', id, '--since', SINCE, '--until', 'soon'], 2, /--until must be an ISO 8601 time/],
      [['--id', id, '--since', UNTIL, '--until', SINCE], 2, /since must be before until/],
      [['--id', unknown, '--since', SINCE], 1, new RegExp(unknown)],
    ]
    for (const [args, code, message] of cases) {
      const result = await cli('webhooks', 'replay', '--db', db, ...args)
      expect(result.code, args.join(' ')).toBe(code)
      expect(result.stderr).toMatch(message)
    }
    expect((await ok('webhooks', 'deliveries', '--db', db, '--id', id, '--json')).deliveries).toEqual([])
  })
})
