/**
 * Child-process entry: serves one benchmark target on 127.0.0.1 and talks to the parent over
 * IPC. Each target gets a process of its own, so neither server's heap, garbage collector or
 * JIT state is shared with the other or with autocannon.
 *
 * argv: <plugin|bare> <sqlite file> <company id> <per_page>
 */
import type { FastifyInstance } from 'fastify'
import { BARE_USERS_PATH, buildBareApp } from './bare-app.js'
import { CpuSampler } from './cpu-profile.js'
import { buildPluginApp, PLUGIN_USERS_PATH } from './plugin-app.js'
import type { ChildMessage, ParentMessage, TargetKind } from './server-protocol.js'

/** V8's default for `--cpu-prof` is 1000 µs; finer sampling for requests of ~100 µs. */
const PROFILE_INTERVAL_MICROS = 250

const [kind, filename, companyArg, perPageArg] = process.argv.slice(2) as [TargetKind, string, string, string]

function send(message: ChildMessage): void {
  process.send?.(message)
}

async function start(): Promise<void> {
  const companyId = Number(companyArg)
  let app: FastifyInstance
  let path: string
  let headers: Record<string, string> = {}
  let close: () => Promise<void> | void

  if (kind === 'plugin') {
    path = `${PLUGIN_USERS_PATH}?per_page=${perPageArg}`
    const plugin = await buildPluginApp(filename, companyId, path)
    ;({ app, headers } = plugin)
    close = () => plugin.close()
  } else if (kind === 'bare') {
    path = `${BARE_USERS_PATH}?per_page=${perPageArg}`
    const bare = await buildBareApp(filename, companyId)
    app = bare.app
    close = async () => {
      await bare.app.close()
      bare.close()
    }
  } else {
    throw new Error(`unknown target kind ${String(kind)}`)
  }

  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  // Samples only while the parent asks, i.e. during measured rounds.
  const profiler = new CpuSampler(PROFILE_INTERVAL_MICROS)
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'cpu') {
      const usage = process.cpuUsage()
      send({ type: 'cpu', micros: usage.user + usage.system })
    } else if (message.type === 'profile-start') {
      profiler.start().then(() => send({ type: 'profile-started' }), fail)
    } else if (message.type === 'profile-stop') {
      profiler.stop(message.path).then(() => send({ type: 'profile-written' }), fail)
    } else if (message.type === 'close') {
      Promise.resolve(close()).then(() => process.exit(0), fail)
    }
  })
  send({ type: 'ready', url: `${address}${path}`, headers })
}

function fail(error: unknown): void {
  send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) })
  process.exit(1)
}

start().catch(fail)
