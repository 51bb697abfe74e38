import { readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

/**
 * Corridor stages of issue 25, each as the source files and packages whose self time it is.
 * The first match wins, so the order matters (list-pages.ts is the query's, not rendering's).
 * The hand-written baseline's files (bench/pages-baseline*.ts, pages-routes.ts) are sorted into
 * the same stages, so its profile reads beside serve's.
 */
const STAGES: ReadonlyArray<readonly [string, RegExp]> = [
  ['authenticate', /^src\/(corridor\/authenticate|auth\/api-key|auth\/key-verifier)\.ts$/],
  ['rate limit', /^src\/corridor\/rate-limit\.ts$|^node_modules\/(@fastify\/rate-limit|toad-cache)$/],
  ['authorize', /^src\/(corridor\/authorize|auth\/module-cache|scopes)\.ts$/],
  ['validation', /^src\/corridor\/validate\.ts$|^node_modules\/(ajv|ajv-formats|fast-uri|fast-deep-equal|json-schema-traverse)$|^\(compiled validator\)$/],
  [
    'query',
    /^adapters\/|^node_modules\/(kysely|better-sqlite3|bindings|pg|pg-.+|pgpass|postgres-.+|buffer-writer|packet-reader)$|^src\/api\/(list-pages|company-read-limiter|keyset-fallback)\.ts$|^bench\/pages-baseline-sql\.ts$/,
  ],
  ['usage meter', /^src\/usage\//],
  ['serialization', /^node_modules\/fast-json-stringify$|^\(compiled serializer\)$/],
  ['handler', /^src\/api\/(read-routes|route-spec|resource|catalogue|operation-ids)\.ts$|^bench\/pages-baseline\.ts$/],
  ['rendering', /^src\/api\/|^src\/money\.ts$|^bench\/pages-routes\.ts$/],
  ['request log (pino)', /^node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact|quick-format-unescaped|on-exit-leak-free|atomic-sleep|safe-stable-stringify|fast-json-stringify-logger)$|^src\/logging\.ts$/],
  ['other corridor (headers, ETag, render)', /^src\/corridor\//],
  ['webhook dispatcher', /^src\/webhooks\//],
  ['other plugin code', /^src\//],
  ['garbage collector', /^\(garbage collector\)$/],
  ['Fastify (routing, hooks, reply)', /^node_modules\/(fastify|find-my-way|avvio|fast-querystring|fastify-plugin|@fastify\/.+|rfdc|secure-json-parse|fast-decode-uri-component|safe-regex2|ret)$/],
  ['Node HTTP, sockets, timers', /^node:/],
  ['rest (other packages, builtins without a caller)', /./],
]

export const STAGE_NAMES: readonly string[] = STAGES.map(([name]) => name)

/** The parts of V8's `.cpuprofile` read here. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>
  samples: number[]
  timeDeltas: number[]
}

export interface StageTimes {
  /** Sampled main-thread busy time (idle left out), µs. */
  busyMicros: number
  byStage: Map<string, number>
  /** Self time by source (a repository file, a package, a compiled function kind), for the curious. */
  bySource: Map<string, number>
}

/**
 * Self time of a profile of the built CLI, by corridor stage. The CLI is a bundle (tsup, no
 * source maps), but esbuild marks where each module starts with a `// src/…/file.ts` line: a
 * frame's function is attributed to the last marker above its line. Functions compiled at run
 * time have no file: `validate<n>` are ajv's validators, `anonymous<n>` and `main` the serializers
 * fast-json-stringify builds.
 */
export function stageTimes(profilePath: string, root: string): StageTimes {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const self = new Map<number, number>()
  profile.samples.forEach((id, index) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[index + 1] ?? 0)))
  const markers = new Map<string, Array<[number, string]>>()
  const times: StageTimes = { busyMicros: 0, byStage: new Map(), bySource: new Map() }
  for (const [id, micros] of self) {
    const frame = (byId.get(id) as CpuProfile['nodes'][number]).callFrame
    if (frame.functionName === '(idle)' || frame.functionName === '(program)') continue
    let source = sourceOf(frame, root, markers)
    let stage: string
    // A builtin (`toISOString`, `JSON.parse`) or a Node API (`fs.writeSync`, `postMessage`, a
    // socket write) works for its caller: charge the nearest frame above it that is our code or a
    // package's, so a stage's cost includes the builtins and Node APIs it calls. What only Node
    // runs (parsing HTTP, reading sockets from the event loop) stays Node's.
    if (isNodeOrNative(source)) {
      let caller: string | undefined
      for (let at = parent.get(id); at !== undefined && caller === undefined; at = parent.get(at)) {
        const above = sourceOf((byId.get(at) as CpuProfile['nodes'][number]).callFrame, root, markers)
        if (!isNodeOrNative(above) && !/^\((root|program|idle|garbage collector)\)$/.test(above)) caller = above
      }
      if (caller === undefined) {
        if (source === '(native)') source = '(native, no JavaScript caller)'
        stage = stageOf(source)
      } else {
        stage = stageOf(caller)
        source = `${caller} (via ${source.startsWith('node:') ? 'Node' : 'builtins'})`
      }
    } else {
      stage = stageOf(source)
    }
    times.busyMicros += micros
    add(times.bySource, source, micros)
    add(times.byStage, stage, micros)
  }
  return times
}

function isNodeOrNative(source: string): boolean {
  return source === '(native)' || source.startsWith('node:')
}

export function stageOf(source: string): string {
  return (STAGES.find(([, pattern]) => pattern.test(source)) as readonly [string, RegExp])[0]
}

function sourceOf(frame: CpuProfile['nodes'][number]['callFrame'], root: string, markers: Map<string, Array<[number, string]>>): string {
  if (frame.url === '') {
    if (/^validate\d*$/.test(frame.functionName)) return '(compiled validator)'
    if (/^(anonymous\d+|main)$/.test(frame.functionName)) return '(compiled serializer)'
    return frame.functionName.startsWith('(') ? frame.functionName : '(native)'
  }
  if (frame.url.startsWith('node:')) return frame.url.startsWith('node:internal') ? 'node:internal/*' : frame.url
  const path = frame.url.startsWith('file://') ? new URL(frame.url).pathname : frame.url
  const modules = path.lastIndexOf('/node_modules/')
  // The CLI's copy lives under node_modules/.cache: its files are bundles with module markers.
  if (/\/node_modules\/\.cache\/[^/]+\//.test(path) || path.startsWith(join(root, 'dist/'))) {
    return bundledSource(path, frame.lineNumber, markers)
  }
  if (modules !== -1) {
    const parts = path.slice(modules + '/node_modules/'.length).split('/')
    return `node_modules/${parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]}`
  }
  return path.startsWith(root) ? relative(root, path) : path
}

function bundledSource(path: string, line: number, cache: Map<string, Array<[number, string]>>): string {
  let marks = cache.get(path)
  if (marks === undefined) {
    marks = []
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((text, index) => {
        const match = /^\/\/ ((?:src|adapters)\/[\w/.-]+\.ts)$/.exec(text)
        if (match !== null) marks?.push([index, match[1] as string])
      })
    cache.set(path, marks)
  }
  let found = '(bundle, before any module marker)'
  for (const [at, source] of marks) {
    if (at > line) break
    found = source
  }
  return found
}

function add(map: Map<string, number>, key: string, micros: number): void {
  map.set(key, (map.get(key) ?? 0) + micros)
}
