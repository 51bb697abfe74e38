/**
 * What recording `previous_attributes` costs on the write path (issue 24):
 *
 *   npx tsx bench/previous-attributes.ts [--rounds 8] [--requests 2000] [--renders 20000]
 *
 * 1. `PATCH /v1/todos/:id` through the plugin (`app.inject`, no network: the plugin's own time,
 *    which is where the extra render lands), on the memory adapter and on a SQLite file. Each
 *    request changes the title, so each records a `todos.updated`.
 * 2. `renderEvent` of that event alone.
 *
 * Both run twice per round: as shipped (the write passes the record before the change, and the
 * payload gets `previous_attributes`) and as before issue 24 (the catalogue is told, in this
 * process only, to ignore `previous`). The modes alternate round by round, each starting the
 * round in turn, so load from a neighbour on a shared machine falls on both alike; the medians of
 * the rounds are compared. Figures are reported, never asserted. Results: docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import { createMemoryAdapter } from '../adapters/memory/index.js'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { ResourceCatalogue, type AnyEventInput } from '../src/api/catalogue.js'
import { CONTRACT } from '../src/api/index.js'
import { workforceApi } from '../src/plugin.js'
import type { ReferenceAdapterPorts } from '../src/ports/index.js'
import type { TodoRecord } from '../src/ports/records.js'
import { generateDataset } from '../src/seed/generate.js'

const PREFIX = '/api/public'
const COMPANY_ID = 1
/** To-dos the PATCHes cycle through (one row written again and again would be a special case). */
const TARGETS = 16

type Mode = 'with previous' | 'without'
const MODES: readonly Mode[] = ['without', 'with previous']

// The "before issue 24" mode: the same catalogue, told to ignore `previous`. Both modes go through
// this wrapper, so it costs them the same.
let mode: Mode = 'with previous'
const render = ResourceCatalogue.prototype.renderEvent
ResourceCatalogue.prototype.renderEvent = function renderEvent(input: AnyEventInput, now: Date) {
  return render.call(this, mode === 'with previous' ? input : { type: input.type, companyId: input.companyId, record: input.record }, now)
}

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`)
  if (at === -1) return fallback
  const value = Number(process.argv[at + 1])
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`)
  return value
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

interface Target {
  name: string
  app: FastifyInstance
  headers: Record<string, string>
  ids: number[]
  close(): Promise<void>
}

async function mount(name: string, adapter: ReferenceAdapterPorts, close: () => Promise<void>): Promise<Target> {
  await adapter.loadDataset(generateDataset())
  const app = Fastify({ logger: false })
  const { storage, keyStore, modules, writes, idempotency } = adapter
  await app.register(workforceApi, { prefix: PREFIX, storage, keyStore, modules, writes, idempotency, rateLimit: false })
  await app.ready()
  const { key } = await app.workforceApi.keys.create({ companyId: COMPANY_ID, scopes: ['all'], name: 'benchmark' })
  const page = await app.inject({ method: 'GET', url: `${PREFIX}/v1/todos?per_page=${TARGETS}`, headers: { 'x-api-key': key } })
  const ids = (page.json().data as Array<{ id: number }>).map((todo) => todo.id)
  if (ids.length === 0) throw new Error(`${name}: company ${COMPANY_ID} has no to-dos`)
  return {
    name,
    app,
    headers: { 'x-api-key': key },
    ids,
    async close() {
      await app.close()
      await close()
    },
  }
}

let sequence = 0

/** One round's cost per operation: wall time, and this process's CPU time (less disturbed by a neighbour's load). */
interface Sample {
  wall: number
  cpu: number
}

/** `requests` PATCHes one after another; microseconds per request. */
async function patchRound(target: Target, requests: number): Promise<Sample> {
  const cpu = process.cpuUsage()
  const started = process.hrtime.bigint()
  for (let i = 0; i < requests; i++) {
    sequence += 1
    const id = target.ids[sequence % target.ids.length] as number
    const response = await target.app.inject({ method: 'PATCH', url: `${PREFIX}/v1/todos/${id}`, headers: target.headers, payload: { title: `Benchmark ${sequence}` } })
    if (response.statusCode !== 200) throw new Error(`${target.name}: PATCH answered ${response.statusCode}: ${response.body}`)
  }
  const wall = Number(process.hrtime.bigint() - started) / 1_000 / requests
  const used = process.cpuUsage(cpu)
  return { wall, cpu: (used.user + used.system) / requests }
}

/** `renders` renderings of one `todos.updated`; nanoseconds per event. */
function renderRound(before: TodoRecord, after: TodoRecord, renders: number): Sample {
  const now = new Date()
  const input = { type: 'todos.updated', companyId: COMPANY_ID, record: after, previous: before }
  let bytes = 0
  const cpu = process.cpuUsage()
  const started = process.hrtime.bigint()
  for (let i = 0; i < renders; i++) bytes += CONTRACT.renderEvent(input, now).payload.length
  const wall = Number(process.hrtime.bigint() - started) / renders
  const used = process.cpuUsage(cpu)
  if (bytes === 0) throw new Error('nothing rendered')
  return { wall, cpu: ((used.user + used.system) * 1_000) / renders }
}

/** Runs `round(mode)` `rounds` times per mode, alternating which mode goes first; medians per mode. */
async function alternate(rounds: number, round: () => Promise<Sample> | Sample): Promise<Record<Mode, Sample[]>> {
  const samples: Record<Mode, Sample[]> = { without: [], 'with previous': [] }
  for (let r = 0; r < rounds; r++) {
    for (const current of r % 2 === 0 ? MODES : [...MODES].reverse()) {
      mode = current
      samples[current].push(await round())
    }
  }
  return samples
}

function report(label: string, unit: string, samples: Record<Mode, Sample[]>): string[] {
  return (['wall', 'cpu'] as const).map((kind) => {
    const of = (current: Mode) => samples[current].map((sample) => sample[kind])
    const without = median(of('without'))
    const withPrevious = median(of('with previous'))
    const spread = (values: number[]) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`
    return `| ${label} | ${kind} | ${without.toFixed(1)} (${spread(of('without'))}) | ${withPrevious.toFixed(1)} (${spread(of('with previous'))}) | ${unit} | ${((withPrevious / without - 1) * 100).toFixed(1)} % |`
  })
}

async function main(): Promise<void> {
  const rounds = option('rounds', 8)
  const requests = option('requests', 2000)
  const renders = option('renders', 20_000)
  const load = () => loadavg().map((value) => value.toFixed(2)).join(' ')
  console.error(`previous-attributes: Node ${process.version}, load average ${load()}; ${rounds} rounds per mode, ${requests} PATCHes and ${renders} renders per round`)

  const dir = mkdtempSync(join(tmpdir(), 'wfa-bench-previous-'))
  const rows: string[] = []
  try {
    const memory = createMemoryAdapter()
    const sqlite = await openSqliteAdapter({ filename: join(dir, 'previous.db') })
    const targets = [await mount('memory', memory, async () => {}), await mount('sqlite (file, WAL)', sqlite, () => sqlite.close())]
    for (const target of targets) {
      // Warm-up in both modes: JIT, statement caches, the serializers compiled on first use.
      for (const warm of MODES) {
        mode = warm
        await patchRound(target, Math.ceil(requests / 4))
      }
      const samples = await alternate(rounds, () => patchRound(target, requests))
      rows.push(...report(`PATCH /v1/todos/:id, ${target.name}`, 'µs/request', samples))
      console.error(`previous-attributes: ${target.name} done, load average ${load()}`)
      await target.close()
    }
    const seed = generateDataset().todos.find((todo) => todo.company_id === COMPANY_ID) as TodoRecord
    const after = { ...seed, title: `${seed.title} (renamed)`, updated_at: new Date(seed.updated_at.getTime() + 60_000) }
    for (const warm of MODES) {
      mode = warm
      renderRound(seed, after, renders)
    }
    rows.push(...report('renderEvent(todos.updated) alone', 'ns/event', await alternate(rounds, () => renderRound(seed, after, renders))))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  console.log(`| case | time | without previous_attributes: median (range) | with: median (range) | unit | cost |`)
  console.log(`|---|---|---|---|---|---|`)
  for (const row of rows) console.log(row)
  console.error(`previous-attributes: load average ${load()} at the end`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
