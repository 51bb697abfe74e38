import { createInterface } from 'node:readline'
import { Writable } from 'node:stream'
import { parseArgs } from 'node:util'
import { ApiError, ClientSetupError, createApiClient } from './client.js'
import { Mirror } from './mirror.js'
import { progressBars } from './progress.js'
import { MirrorMismatchError, syncMirror, type FullSyncReason, type SyncReport } from './sync.js'

const DEFAULT_DB = 'mirror.db'
/** The environment variable read when `--key` is not given (a key on the command line lands in shell history). */
const KEY_VARIABLE = 'WORKFORCE_API_KEY'
/** `--key -` reads the key from standard input. */
const FROM_STDIN = '-'

export const USAGE = `Usage: ${KEY_VARIABLE}=<api-key> npm run sync-client -- --url <base-url> [--db <file>] [--full]
       npm run sync-client -- --url <base-url> --key - [--db <file>] [--full]   (the key on standard input)

Mirrors one company's data from the workforce public API into a local SQLite file. The first
run takes the events feed's cursor, then reads every list; later runs apply the events since
(creations, updates and deletions). Roles (which have no events) and the company are read whole
every time, asked with the ETag kept from the last run: unchanged, they come back 304 Not
Modified, which costs no rate budget. If the cursor has expired, the run says so and reads
everything again.

Options:
  --url <base-url>  where the API is mounted, without /v1 (e.g. http://127.0.0.1:3000/api/public)
  --key -           read the API key from standard input (on a terminal: typed, not shown)
  --key <api-key>   the key itself: avoid it, other users see it in the process list and npm
                    prints it with the script line; default: $${KEY_VARIABLE}
  --db <file>       the mirror file, created if missing (default: ${DEFAULT_DB})
  --full            start again from scratch: a new cursor, then every list read whole
  -h, --help        show this help
`

export interface CliIo {
  /** Where `--key -` reads the key. Default: `process.stdin`. */
  stdin?: NodeJS.ReadableStream
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  env: NodeJS.ProcessEnv
  /** Draw progress bars (on stderr). Default: when stderr is a terminal. */
  progress?: boolean
  /** How to wait before a retry. Default: a timer; tests pass one that does not wait. */
  sleep?: (ms: number) => Promise<void>
}

/** A mistake in the command line: exit code 2. */
class UsageError extends Error {}

/**
 * The `sync-client` command: parses `argv`, syncs, prints a summary; returns the exit code. A
 * failure is one line on stderr.
 *
 * @example
 * process.exitCode = await runCli(process.argv.slice(2))
 */
export async function runCli(argv: readonly string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr, env: process.env }): Promise<number> {
  let mirror: Mirror | undefined
  const bars = progressBars({ stream: io.stderr, enabled: io.progress ?? (io.stderr as NodeJS.WriteStream).isTTY === true })
  try {
    const args = parseCommandLine(argv, io.env)
    if (args === 'help') {
      io.stdout.write(USAGE)
      return 0
    }
    const key = args.key === FROM_STDIN ? await readKey(io.stdin ?? process.stdin, io.stderr) : args.key
    const client = createApiClient({
      baseUrl: args.url,
      key,
      retry: {
        ...(io.sleep === undefined ? {} : { sleep: io.sleep }),
        onRetry: (retry) => bars.log(`retrying ${retry.method} ${new URL(retry.url).pathname} in ${Math.ceil(retry.delayMs / 1000)} s (${retry.status ?? 'no response'})`),
      },
    })
    mirror = Mirror.open(args.db)
    const report = await syncMirror(client, mirror, { full: args.full, progress: bars, log: (line) => bars.log(line) })
    bars.stop()
    io.stdout.write(summary(report, args.db))
    return 0
  } catch (error) {
    bars.stop()
    io.stderr.write(`sync-client: ${describeFailure(error)}\n`)
    return error instanceof UsageError ? 2 : 1
  } finally {
    mirror?.close()
  }
}

const OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
  db: { type: 'string', default: DEFAULT_DB },
  full: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const

function parseCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): { url: string; key: string; db: string; full: boolean } | 'help' {
  const values = parseOrExplain(argv)
  if (values.help) return 'help'
  const key = values.key ?? env[KEY_VARIABLE]
  if (values.url === undefined) throw new UsageError('--url is required (e.g. --url http://127.0.0.1:3000/api/public); see --help')
  if (key === undefined || key === '') throw new UsageError(`--key is required (or set ${KEY_VARIABLE}); see --help`)
  if (values.db === '') throw new UsageError('--db must name a file')
  return { url: values.url, key, db: values.db, full: values.full }
}

/**
 * The warning for a key typed on the command line (`--key owk_…`): other users see it in the
 * process list, the shell keeps it in its history, and `npm run` prints it with the script line.
 * `null` when the key comes from elsewhere. The command (main.ts) prints it; a program calling
 * `runCli` with an argv of its own is not warned.
 */
export function keyOnCommandLineWarning(argv: readonly string[]): string | null {
  const onLine = argv.some((arg, index) => (arg === '--key' && argv[index + 1] !== undefined && argv[index + 1] !== FROM_STDIN) || (arg.startsWith('--key=') && arg !== `--key=${FROM_STDIN}`))
  if (!onLine) return null
  return (
    'sync-client: warning: a key given with --key is visible to other users in the process list, and npm prints it ' +
    `with the script line; set ${KEY_VARIABLE} instead, or pass --key - and give it on standard input\n`
  )
}

/**
 * `--key -`: the first line of `stdin`. On a terminal it asks for the key and does not echo it
 * (readline writes its echo to a stream that drops it); from a pipe or a file it reads the line.
 */
async function readKey(stdin: NodeJS.ReadableStream, prompt: NodeJS.WritableStream): Promise<string> {
  const terminal = (stdin as NodeJS.ReadStream).isTTY === true
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() })
  // The interface first: on a terminal it turns echo off (raw mode), and only then may the
  // prompt invite typing, or a key typed at once would be echoed before echo is off.
  const lines = createInterface({ input: stdin, output: silent, terminal })
  if (terminal) prompt.write('API key (not shown as you type): ')
  try {
    const line = await new Promise<string | null>((resolve) => {
      lines.once('line', resolve)
      lines.once('close', () => resolve(null))
      // Ctrl-C in raw mode reaches readline, not the process: stop as the signal would.
      lines.once('SIGINT', () => resolve(null))
    })
    if (terminal) prompt.write('\n')
    const key = line?.trim() ?? ''
    if (key === '') throw new UsageError('--key -: no key on standard input')
    return key
  } finally {
    lines.close()
  }
}

/** `parseArgs`, its refusals turned into a `UsageError` of one line. */
function parseOrExplain(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false }).values
  } catch (error) {
    throw new UsageError(`${(error as Error).message.split('\n')[0] ?? ''}; see --help`)
  }
}

/** Why a run read every list, as the summary says it. */
const FULL_SYNC_REASONS: Record<FullSyncReason, string> = {
  first: 'first run',
  requested: '--full',
  resources: 'the resources mirrored changed',
  expired: 'the cursor had expired',
  resumed: 'resuming an interrupted full read',
}

/** The table printed at the end: per resource, then the totals. */
export function summary(report: SyncReport, db: string): string {
  const header = ['resource', 'mode', 'records', 'pages', 'events', 'changed', 'removed']
  const rows = report.resources.map((r) => [r.resource, r.mode, r.fetched, r.pages, r.events, r.changed, r.removed].map(String))
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)))
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column >= 2 ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd()
  const records = report.resources.reduce((sum, r) => sum + r.fetched, 0)
  const pages = report.resources.reduce((sum, r) => sum + r.pages, 0)
  return [
    report.fullSync === null ? 'followed the events feed' : `full sync (${FULL_SYNC_REASONS[report.fullSync]}): cursor first, then every list`,
    line(header),
    ...rows.map(line),
    '',
    `${records} records in ${pages} pages, ${report.feed.events} events in ${report.feed.pages} feed pages, ${report.requests} requests (${report.retries} retries, ${report.notModified} not modified), ${(report.elapsedMs / 1000).toFixed(1)} s; mirror: ${db}`,
    '',
  ].join('\n')
}

/** One line that says what failed and, where it can, what to do. */
export function describeFailure(error: unknown): string {
  if (error instanceof UsageError || error instanceof ClientSetupError || error instanceof MirrorMismatchError) return error.message
  if (error instanceof ApiError) {
    if (error.status === 401) return `${error.message}: check --key`
    if (error.status === 403) return `${error.message}: the key must read every resource it mirrors, and their events`
    return error.message
  }
  const found = networkFailure(error)
  if (found !== null) return found
  const { code, message } = error as { code?: unknown; message?: unknown }
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return `the mirror database: ${String(message)} (${code})`
  if (error instanceof TypeError && String(message).startsWith('Cannot open database')) return `the mirror database: ${String(message)}`
  const text = error instanceof Error ? error.message : String(error)
  return `unexpected error: ${text.split('\n')[0] ?? ''}`
}

/** fetch's `TypeError('fetch failed')` carries the reason in `cause`; a timed-out attempt is a `TimeoutError`. */
function networkFailure(error: unknown): string | null {
  if (error instanceof Error && error.name === 'TimeoutError') return 'the API did not answer in time'
  if (!(error instanceof TypeError) || error.message !== 'fetch failed') return null
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  switch (cause?.code) {
    case 'ECONNREFUSED':
      return 'cannot connect to the API: connection refused (is the server running, on this port?)'
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'cannot connect to the API: the host name does not resolve'
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'the API closed the connection'
    default:
      return `cannot reach the API: ${String(cause?.message ?? error.message)}`
  }
}
