/**
 * Did a change alter any response the test suites receive? (issue 23's proof)
 *
 * Takes three recordings made with `WORKFORCE_RECORD_RESPONSES=<dir>` (test/helpers/response-recording.ts):
 * two runs of the same code before the change and one after it. Responses are matched by test
 * file, test name and their position within the test. Whatever differs between the two "before"
 * runs (fresh ids, keys, instants, `date`, request ids) is nondeterministic: it is masked at that
 * place (a header, a JSON path in the body, a URL segment or query parameter) for that response
 * only. Every other difference between "before" and "after" is reported: a missing or extra
 * response, a status, a header, a body path. Differences that a line of `--allow` names (the
 * documented additions) are listed apart and not counted. Exit code 1 while any difference remains.
 *
 *   npx tsx scripts/compare-recordings.ts <before-a> <before-b> <after> [--allow <file>] [--limit <n>] [--masks]
 *                                         [--rename <old test file>=<new test file>]…
 *
 * `--rename` compares a test file that the change moved under its new name ("before" entries are renamed).
 * `--masks` lists every masked path, `--limit` how many differences are printed (50).
 *
 * An allow file has one rule a line, `METHOD URL FIELD`, `#` starting a comment:
 *   GET /settings/integrations/api/scopes  body.data[*].description
 *   *   /api/public/v1/teams**                 response
 * METHOD is a method or `*`; URL is a glob over the request's path (without the query), `*`
 * within one segment, `**` across segments; FIELD is a path as reported (`status`,
 * `headers.x-name`, `body.data[*].field`, `url.query.cursor`), `[*]` for any index and `*` for
 * any one key, covering everything below it; `response` covers the whole response, including
 * its being missing or extra.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** One line of a recording (the fields `scripts/` reads of test/helpers/response-recording.ts's `RecordedResponse`). */
export interface Recorded {
  file: string
  test: string
  seq: number
  method: string
  url: string
  status: number
  headers: Record<string, string | string[]>
  body: Json
  [other: string]: unknown
}

export type DifferenceKind = 'missing' | 'extra' | 'changed' | 'added' | 'removed'

export interface Difference {
  file: string
  test: string
  seq: number
  method: string
  url: string
  kind: DifferenceKind
  /** Where in the response: `status`, `headers.etag`, `body.data[2].name`, `url.path[3]`; `response` for a missing or extra one. */
  path: string
  before?: Json | undefined
  after?: Json | undefined
}

export interface AllowRule {
  line: string
  method: string
  url: RegExp
  field: RegExp | 'response'
}

export interface FileSummary {
  file: string
  responses: number
  masked: number
  differences: number
  allowed: number
}

export interface Comparison {
  differences: Difference[]
  allowed: Difference[]
  /** Masked path (indices as `[*]`) → in how many responses it differed between the "before" runs. */
  masks: Map<string, number>
  /** Header names that differed in some response: masked in every response (`date`, time-derived counters). */
  headersEverywhere: string[]
  /** Tests whose responses came in a different order in the two "before" runs. */
  reordered: string[]
  /** Responses present in only one "before" run: not compared. */
  unstable: Array<Pick<Recorded, 'file' | 'test' | 'seq' | 'method' | 'url'>>
  /** Responses of tests that exist only "after" (new tests): listed, not counted. */
  newTests: Map<string, number>
  files: FileSummary[]
}

const keyOf = (entry: Pick<Recorded, 'file' | 'test' | 'seq'>) => `${entry.file}\u0000${entry.test}\u0000${entry.seq}`
const testOf = (entry: Pick<Recorded, 'file' | 'test'>) => `${entry.file}\u0000${entry.test}`

/** What is compared of a response: the URL split into path segments and query parameters, so one id in it is masked alone. */
function viewOf(entry: Recorded): Json {
  const url = new URL(entry.url, 'http://recorded.invalid')
  const query: Record<string, Json> = {}
  for (const [name, value] of url.searchParams) {
    const had = query[name]
    query[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value]
  }
  return {
    method: entry.method,
    url: { path: url.pathname.split('/').slice(1), query },
    status: entry.status,
    headers: entry.headers,
    body: entry.body,
  }
}

const isObject = (value: Json | undefined): value is { [key: string]: Json } => value !== null && typeof value === 'object' && !Array.isArray(value)
const step = (path: string, key: string) => (/^[A-Za-z_$][\w$-]*$/.test(key) ? (path === '' ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key)}]`)

/** The paths at which `a` and `b` differ; where their shapes differ (array lengths, types), the whole container. */
export function maskOf(a: Json, b: Json, path = '', into = new Set<string>()): Set<string> {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) into.add(path)
    else a.forEach((item, index) => maskOf(item, b[index] as Json, `${path}[${index}]`, into))
  } else if (isObject(a) && isObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(key in a) || !(key in b)) into.add(step(path, key))
      else maskOf(a[key] as Json, b[key] as Json, step(path, key), into)
    }
  } else if (a !== b) {
    into.add(path)
  }
  return into
}

/** A path with its array indices as `[*]`: `body.data[3].id` → `body.data[*].id`. */
export const generalPath = (path: string) => path.replace(/\[\d+\]/g, '[*]')

/** Every difference from `before` to `after` outside the masked paths (and all below them), as `[kind, path, before, after]`. */
export function diffOf(
  before: Json | undefined,
  after: Json | undefined,
  masked: ReadonlySet<string> | ((path: string) => boolean),
  path = '',
): Array<[DifferenceKind, string, Json | undefined, Json | undefined]> {
  if (typeof masked === 'function' ? masked(path) : masked.has(path)) return []
  if (before === undefined) return [['added', path, undefined, after]]
  if (after === undefined) return [['removed', path, before, undefined]]
  if (Array.isArray(before) && Array.isArray(after)) {
    const out: Array<[DifferenceKind, string, Json | undefined, Json | undefined]> = []
    for (let index = 0; index < Math.max(before.length, after.length); index++) out.push(...diffOf(before[index], after[index], masked, `${path}[${index}]`))
    return out
  }
  if (isObject(before) && isObject(after)) {
    const out: Array<[DifferenceKind, string, Json | undefined, Json | undefined]> = []
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) out.push(...diffOf(before[key], after[key], masked, step(path, key)))
    return out
  }
  return before === after ? [] : [['changed', path, before, after]]
}

/** Parses an allow file (see the top of this file). */
export function parseAllow(text: string): AllowRule[] {
  const rules: AllowRule[] = []
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim()
    if (line === '') continue
    const parts = line.split(/\s+/)
    if (parts.length !== 3) throw new Error(`allow rule needs METHOD URL FIELD: ${raw}`)
    const [method, url, field] = parts as [string, string, string]
    const urlPattern = url
      .split('**')
      .map((part) => part.split('*').map(escape).join('[^/]*'))
      .join('.*')
    const fieldPattern = field
      .split('[*]')
      .map((part) => part.split('*').map(escape).join('[^.\\[]+'))
      .join('\\[\\d+\\]')
    rules.push({
      line,
      method: method.toUpperCase(),
      url: new RegExp(`^${urlPattern}$`),
      field: field === 'response' ? 'response' : new RegExp(`^${fieldPattern}(?=$|[.[])`),
    })
  }
  return rules
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

export function isAllowed(difference: Difference, rules: readonly AllowRule[]): boolean {
  const path = new URL(difference.url, 'http://recorded.invalid').pathname
  return rules.some(
    (rule) =>
      (rule.method === '*' || rule.method === difference.method) &&
      rule.url.test(path) &&
      (rule.field === 'response' || (difference.path !== 'response' && rule.field.test(difference.path))),
  )
}

/** Compares `after` with `beforeA`, masking what differs between `beforeA` and `beforeB`. */
export function compareRecordings(beforeA: readonly Recorded[], beforeB: readonly Recorded[], after: readonly Recorded[], rules: readonly AllowRule[] = []): Comparison {
  const a = new Map(beforeA.map((entry) => [keyOf(entry), entry]))
  const b = new Map(beforeB.map((entry) => [keyOf(entry), entry]))
  const later = new Map(after.map((entry) => [keyOf(entry), entry]))
  const testsBefore = new Set([...beforeA, ...beforeB].map(testOf))
  const result: Comparison = { differences: [], allowed: [], masks: new Map(), headersEverywhere: [], reordered: [], unstable: [], newTests: new Map(), files: [] }
  const files = new Map<string, FileSummary>()
  const summaryOf = (file: string) => {
    let summary = files.get(file)
    if (summary === undefined) files.set(file, (summary = { file, responses: 0, masked: 0, differences: 0, allowed: 0 }))
    return summary
  }
  const report = (difference: Difference) => {
    const summary = summaryOf(difference.file)
    if (isAllowed(difference, rules)) {
      result.allowed.push(difference)
      summary.allowed++
    } else {
      result.differences.push(difference)
      summary.differences++
    }
  }
  const reordered = new Set<string>()

  // First pass: what differs between the two "before" runs, per response.
  const learned = new Map<string, Set<string>>()
  const perTest = new Map<string, Set<string>>()
  const headers = new Set<string>()
  for (const [key, first] of a) {
    const second = b.get(key)
    if (second === undefined) {
      result.unstable.push(first)
      continue
    }
    // The same position answered a different request in the two runs: the test's order varies.
    if (first.method !== second.method || new URL(first.url, 'http://x').pathname.split('/').length !== new URL(second.url, 'http://x').pathname.split('/').length) {
      reordered.add(testOf(first))
    }
    const masked = maskOf(viewOf(first), viewOf(second))
    learned.set(key, masked)
    summaryOf(first.file).masked += masked.size
    let wide = perTest.get(testOf(first))
    if (wide === undefined) perTest.set(testOf(first), (wide = new Set()))
    for (const path of masked) {
      const general = generalPath(path)
      result.masks.set(general, (result.masks.get(general) ?? 0) + 1)
      wide.add(general)
      if (path.startsWith('headers')) headers.add(path)
    }
  }
  result.headersEverywhere = [...headers].sort()

  // Second pass: "after" against the first "before" run. A value is masked where it differed in
  // this response, at the same path (any index) in another response of the same test (a time
  // that happened to fall in the same second twice), or, for a header, in any response at all.
  for (const [key, first] of a) {
    const masked = learned.get(key)
    if (masked === undefined) continue
    const wide = perTest.get(testOf(first)) ?? new Set<string>()
    const isMasked = (path: string) => masked.has(path) || headers.has(path) || wide.has(generalPath(path))
    summaryOf(first.file).responses++
    const now = later.get(key)
    const where = { file: first.file, test: first.test, seq: first.seq, method: first.method, url: first.url }
    if (now === undefined) {
      report({ ...where, kind: 'missing', path: 'response' })
      continue
    }
    for (const [kind, path, was, is] of diffOf(viewOf(first), viewOf(now), isMasked)) report({ ...where, kind, path, before: was, after: is })
  }
  for (const [key, second] of b) if (!a.has(key)) result.unstable.push(second)
  for (const [key, entry] of later) {
    if (a.has(key) || b.has(key)) continue
    if (testsBefore.has(testOf(entry))) report({ file: entry.file, test: entry.test, seq: entry.seq, method: entry.method, url: entry.url, kind: 'extra', path: 'response' })
    else result.newTests.set(testOf(entry), (result.newTests.get(testOf(entry)) ?? 0) + 1)
  }
  result.reordered = [...reordered].map((test) => test.replace('\u0000', ' > '))
  result.files = [...files.values()].sort((x, y) => x.file.localeCompare(y.file))
  return result
}

/** Every response in a recording directory (all its `*.jsonl` files). */
export function loadRecording(dir: string): Recorded[] {
  const entries: Recorded[] = []
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.jsonl')).sort()) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) if (line.trim() !== '') entries.push(JSON.parse(line) as Recorded)
  }
  return entries
}

const shown = (value: Json | undefined) => {
  const text = value === undefined ? '(absent)' : JSON.stringify(value)
  return text.length > 120 ? `${text.slice(0, 117)}...` : text
}

export function formatDifference(difference: Difference): string {
  const where = `${difference.file} > ${difference.test} #${difference.seq} ${difference.method} ${difference.url}`
  if (difference.kind === 'missing' || difference.kind === 'extra') return `${where}: ${difference.kind} response`
  return `${where}: ${difference.kind} ${difference.path}: ${shown(difference.before)} → ${shown(difference.after)}`
}

export function formatComparison(comparison: Comparison, options: { limit?: number; masks?: boolean } = {}): string {
  const limit = options.limit ?? 50
  const lines: string[] = []
  const masks = [...comparison.masks].sort((x, y) => y[1] - x[1])
  const maskedValues = masks.reduce((sum, [, count]) => sum + count, 0)
  lines.push(`masked as nondeterministic (differ between the two "before" runs): ${maskedValues} values at ${masks.length} paths`)
  lines.push(`  (each path is also masked in the other responses of the same test; these headers in every response: ${comparison.headersEverywhere.join(', ') || 'none'})`)
  for (const [path, count] of options.masks === true ? masks : masks.slice(0, 15)) lines.push(`  ${String(count).padStart(6)}  ${path}`)
  if (options.masks !== true && masks.length > 15) lines.push(`  … ${masks.length - 15} more paths (--masks lists them all)`)
  if (comparison.reordered.length > 0) {
    lines.push(`tests whose responses came in a different order in the two "before" runs (${comparison.reordered.length}):`)
    for (const test of comparison.reordered) lines.push(`  ${test}`)
  }
  if (comparison.unstable.length > 0) {
    lines.push(`responses in only one "before" run, not compared (${comparison.unstable.length}):`)
    for (const entry of comparison.unstable.slice(0, limit)) lines.push(`  ${entry.file} > ${entry.test} #${entry.seq} ${entry.method} ${entry.url}`)
  }
  if (comparison.newTests.size > 0) {
    lines.push(`tests only in "after" (${comparison.newTests.size}), not counted:`)
    for (const [test, count] of comparison.newTests) lines.push(`  ${test.replace('\u0000', ' > ')}: ${count} responses`)
  }
  if (comparison.allowed.length > 0) {
    lines.push(`allowed differences (documented additions), not counted: ${comparison.allowed.length}`)
    for (const difference of comparison.allowed.slice(0, limit)) lines.push(`  ${formatDifference(difference)}`)
  }
  lines.push('per test file:')
  for (const file of comparison.files) {
    lines.push(`  ${file.file}: ${file.responses} responses, ${file.masked} masked values, ${file.differences} differences, ${file.allowed} allowed`)
  }
  if (comparison.differences.length > 0) {
    lines.push(`differences (${comparison.differences.length}):`)
    for (const difference of comparison.differences.slice(0, limit)) lines.push(`  ${formatDifference(difference)}`)
    if (comparison.differences.length > limit) lines.push(`  … and ${comparison.differences.length - limit} more (--limit)`)
  }
  lines.push(`${comparison.differences.length} difference(s) remain`)
  return lines.join('\n')
}

function main(argv: readonly string[]): number {
  const positional: string[] = []
  let allow: AllowRule[] = []
  const options: { limit?: number; masks?: boolean } = {}
  const renames = new Map<string, string>()
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string
    if (arg === '--allow') allow = parseAllow(readFileSync(argv[++index] as string, 'utf8'))
    else if (arg === '--limit') options.limit = Number(argv[++index])
    else if (arg === '--masks') options.masks = true
    else if (arg === '--rename') {
      const [from, to] = (argv[++index] ?? '').split('=')
      if (from === undefined || to === undefined || from === '' || to === '') throw new Error('--rename needs <old test file>=<new test file>')
      renames.set(from, to)
    }
    else positional.push(arg)
  }
  if (positional.length !== 3) {
    process.stderr.write('usage: npx tsx scripts/compare-recordings.ts <before-a> <before-b> <after> [--allow <file>] [--limit <n>] [--masks] [--rename <old>=<new>]…\n')
    return 2
  }
  const [beforeA, beforeB, after] = positional.map((dir) => loadRecording(dir)) as [Recorded[], Recorded[], Recorded[]]
  for (const entry of [...beforeA, ...beforeB]) entry.file = renames.get(entry.file) ?? entry.file
  process.stdout.write(`responses: before-a ${beforeA.length}, before-b ${beforeB.length}, after ${after.length}\n`)
  const comparison = compareRecordings(beforeA, beforeB, after, allow)
  process.stdout.write(`${formatComparison(comparison, options)}\n`)
  return comparison.differences.length === 0 ? 0 : 1
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main(process.argv.slice(2))
