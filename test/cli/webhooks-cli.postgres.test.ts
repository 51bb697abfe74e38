import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { afterEach, expect, it } from 'vitest'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { exclusiveMemberIds, listIds } from '../helpers/seed-facts.js'
import { startReceiver, type Receiver } from '../webhooks/receiver.js'
import { lastJson, runNode } from '../helpers/cli.js'
import { checkedFetch } from '../helpers/checked-fetch.js'

// The built CLI on Postgres, as an operator runs it: the key comes from WORKFORCE_WEBHOOK_KEY,
// shared by the commands and by serve.
const CLI = join(import.meta.dirname, '../../dist/cli.js')
const KEY_ENV = 'WORKFORCE_WEBHOOK_KEY'

function env(key: string | undefined): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' }
  if (key === undefined) delete result[KEY_ENV]
  else result[KEY_ENV] = key
  return result
}

const cli = (key: string | undefined, ...args: string[]) => runNode(args, { env: env(key) })

function serve(key: string | undefined, args: string[]): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: env(key) })
  let output = ''
  return new Promise((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString()
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match !== null) resolve({ child, url: match[1] as string, output: () => output })
    }
    child.stdout?.on('data', collect)
    child.stderr?.on('data', collect)
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)))
  })
}

describePostgres('workforce-api webhooks on Postgres', () => {
  const database = useTestDatabase()
  const key = randomBytes(32).toString('base64')
  const children: ChildProcess[] = []
  let receiver: Receiver | undefined
  afterEach(async () => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGTERM')
    await receiver?.close()
    receiver = undefined
  })

  it(`manages endpoints with ${KEY_ENV}, and serve (with the same key) delivers to them`, async () => {
    const db = database.current.url
    expect((await cli(key, 'seed', '--db', db)).code).toBe(0)
    receiver = await startReceiver()
    receiver.answer = () => ({ status: 200 })

    const refused = await cli(undefined, 'webhooks', 'create', '--db', db, '--company', '1', '--url', receiver.url, '--events', 'all', '--allow-private')
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(KEY_ENV)

    const created = await cli(key, 'webhooks', 'create', '--db', db, '--company', '1', '--url', receiver.url, '--events', 'todos.created', '--allow-private')
    expect(created.code, created.stderr).toBe(0)
    const { id } = lastJson(created.stdout)
    const rotated = await cli(key, 'webhooks', 'rotate', '--db', db, '--id', id)
    const { secret } = lastJson(rotated.stdout)
    const listed = lastJson((await cli(key, 'webhooks', 'list', '--db', db, '--company', '1', '--json')).stdout)
    expect(listed.endpoints).toEqual([expect.objectContaining({ id, status: 'enabled', events: ['todos.created'] })])

    const { key: apiKey } = lastJson((await cli(key, 'keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--json')).stdout)
    const server = await serve(key, ['--db', db, '--allow-private-webhooks', '--webhook-retry-schedule', '1s'])
    children.push(server.child)
    const response = await checkedFetch(`${server.url}/api/public/v1/todos`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Check scaffolding', list_id: listIds(1)[0], assigned_to: exclusiveMemberIds(1)[0] }),
    })
    expect(response.status).toBe(201)
    const [request] = await receiver.waitFor(1, 10_000)
    expect(new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>)).toMatchObject({ type: 'todos.created' })

    let page: any
    for (let i = 0; i < 50; i++) {
      page = lastJson((await cli(key, 'webhooks', 'deliveries', '--db', db, '--id', id, '--json')).stdout)
      if (page.deliveries[0]?.status === 'delivered') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(page.deliveries[0]).toMatchObject({ status: 'delivered', attempts: 1, attempts_made: [expect.objectContaining({ status_code: 200 })] })
  })

  it(`serve without ${KEY_ENV} still serves the API, and says webhook delivery is off`, async () => {
    const server = await serve(undefined, ['--db', database.current.url])
    children.push(server.child)
    expect((await checkedFetch(`${server.url}/health/live`)).status).toBe(200)
    expect(server.output()).toContain(`webhook delivery is off: set ${KEY_ENV}`)
  })
})
