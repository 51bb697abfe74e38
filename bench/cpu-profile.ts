import { readFileSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { relative } from 'node:path'

/** The parts of V8's `.cpuprofile` format read here. */
interface CpuProfile {
  nodes: Array<{
    id: number
    callFrame: { functionName: string; url: string; lineNumber: number }
    children?: number[]
  }>
  samples: number[]
  timeDeltas: number[]
}

/** Sampled CPU time of one target, in microseconds, by function, by place and inclusively by own file. */
export interface SelfTimes {
  busyMicros: number
  functions: Map<string, number>
  /** A repository file, `node_modules/<package>`, a `node:` module, `(native)`, `(garbage collector)`, … */
  places: Map<string, number>
  /** Time with a repository file (src/, adapters/, bench/) anywhere on the stack, counted once per sample. */
  ownFilesInclusive: Map<string, number>
}

/**
 * Adds up the samples of several `.cpuprofile` files (e.g. the rounds of one target).
 * `(idle)` samples — waiting for the next request — are not work and are left out.
 *
 * Frames carry no line numbers worth printing for TypeScript files: tsx compiles them
 * without the profiler seeing source maps, so a function is named by name and file.
 */
export function readSelfTimes(paths: string[], root: string): SelfTimes {
  const times: SelfTimes = { busyMicros: 0, functions: new Map(), places: new Map(), ownFilesInclusive: new Map() }
  for (const path of paths) addProfile(times, JSON.parse(readFileSync(path, 'utf8')) as CpuProfile, root)
  return times
}

function addProfile(times: SelfTimes, profile: CpuProfile, root: string): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

  const self = new Map<number, number>()
  // timeDeltas[i] is the time before sample i; the time a sample stands for is the next delta.
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index + 1] ?? 0
    self.set(id, (self.get(id) ?? 0) + delta)
  })

  for (const [id, micros] of self) {
    const frame = (byId.get(id) as CpuProfile['nodes'][number]).callFrame
    if (frame.functionName === '(idle)') continue
    times.busyMicros += micros
    const place = placeOf(frame.url, frame.functionName, root)
    const line = place.endsWith('.ts') || frame.url === '' ? '' : `:${frame.lineNumber + 1}`
    add(times.functions, `${frame.functionName || '(anonymous)'} ${place}${line}`, micros)
    add(times.places, packageOf(place), micros)
    const seen = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at) as CpuProfile['nodes'][number]
      const own = placeOf(node.callFrame.url, node.callFrame.functionName, root)
      if (/^(src|adapters|bench)\//.test(own) && !seen.has(own)) {
        seen.add(own)
        add(times.ownFilesInclusive, own, micros)
      }
    }
  }
}

function add(map: Map<string, number>, key: string, micros: number): void {
  map.set(key, (map.get(key) ?? 0) + micros)
}

function placeOf(url: string, functionName: string, root: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)'
  const path = url.startsWith('file://') ? new URL(url).pathname : url
  return path.startsWith(root) ? relative(root, path) : path
}

/** Files of a dependency are pooled under its package; Node's internals under one name. */
function packageOf(place: string): string {
  if (place.startsWith('node:internal')) return 'node:internal/*'
  const modules = place.lastIndexOf('node_modules/')
  if (modules === -1) return place
  const parts = place.slice(modules + 'node_modules/'.length).split('/')
  return `node_modules/${parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`
}

/**
 * V8's sampling profiler on this process's main thread (through `node:inspector`), sampling
 * only between `start()` and `stop()`: start-up, module loading and warm-up stay out of the
 * profile, so its time divides cleanly by the work measured. Each `stop` writes one
 * `.cpuprofile`, which `readSelfTimes` reads.
 */
export class CpuSampler {
  #session: Session | undefined

  /** @param intervalMicros between samples (V8's default is 1000 µs; finer for work of a few hundred µs). */
  constructor(readonly intervalMicros: number) {}

  async start(): Promise<void> {
    if (this.#session === undefined) {
      this.#session = new Session()
      this.#session.connect()
      await this.#session.post('Profiler.enable')
      await this.#session.post('Profiler.setSamplingInterval', { interval: this.intervalMicros })
    }
    await this.#session.post('Profiler.start')
  }

  async stop(path: string): Promise<void> {
    if (this.#session === undefined) throw new Error('CpuSampler.stop() before start()')
    const { profile } = await this.#session.post('Profiler.stop')
    writeFileSync(path, JSON.stringify(profile))
  }

  /** Ends the inspector session (a process that goes on after profiling). */
  close(): void {
    this.#session?.disconnect()
    this.#session = undefined
  }
}
