import { execFile, execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALL_SCOPES } from '../../src/scopes.js'
import { EVENT_TYPES } from '../../src/api/index.js'
import { hasScript, lastJson, runNode, shellLine, type CliResult as Result } from '../helpers/cli.js'

// Issue 11, through the built binary (`npm test` builds first): help everywhere, the version,
// one-line failures, databases that must exist and be migrated, `migrate`, seed's progress bar.
const ROOT = join(import.meta.dirname, '../..')
const CLI = join(ROOT, 'dist/cli.js')
const run = promisify(execFile)

async function cli(...args: string[]): Promise<Result> {
  return runScript(CLI, args)
}

/** `script` with `args`, the webhook key variable cleared so no test depends on the caller's. */
const runScript = (script: string, args: string[], options: { cwd?: string } = {}) =>
  runNode(args, { script, env: { ...process.env, WORKFORCE_WEBHOOK_KEY: '' }, ...options })

/** A failure as the user sees it: exactly one line on stderr, no stack frame. */
function expectOneLine(result: Result, code: number, message: string | RegExp): void {
  expect(result.code, result.stderr).toBe(code)
  const lines = result.stderr.trimEnd().split('\n')
  expect(lines, result.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(typeof message === 'string' ? new RegExp(escapeRegExp(message)) : message)
  expect(result.stderr).not.toMatch(/^\s+at /m)
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Runs `command` with stdout and stderr on a pseudo-terminal (util-linux `script`), as a person would. */
function inTerminal(command: string[]): string {
  return execFileSync('script', ['-qec', shellLine(command), '/dev/null'], { encoding: 'utf8', env: { ...process.env, WORKFORCE_WEBHOOK_KEY: '' } })
}
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'wfa-cli-usability-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** Every command and subcommand, as typed before `--help`. */
const HELP_TOPICS: string[][] = [
  ['seed'],
  ['migrate'],
  ['serve'],
  ['keys'],
  ['keys', 'create'],
  ['keys', 'list'],
  ['keys', 'disable'],
  ['keys', 'enable'],
  ['keys', 'revoke'],
  ['modules'],
  ['modules', 'set'],
  ['webhooks'],
  ['webhooks', 'create'],
  ['webhooks', 'list'],
  ['webhooks', 'enable'],
  ['webhooks', 'disable'],
  ['webhooks', 'delete'],
  ['webhooks', 'rotate'],
  ['webhooks', 'deliveries'],
  ['webhooks', 'replay'],
]

// Read-only and independent: run side by side.
describe.concurrent('help', () => {
  it.each(HELP_TOPICS.flatMap((topic) => [[...topic, '--help'], [...topic, '-h']]))('%s … exits 0 with its usage on stdout', async (...args) => {
    const result = await cli(...args)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe('')
    const command = args.filter((arg) => !arg.startsWith('-')).join(' ')
    expect(result.stdout).toMatch(new RegExp(`^usage: workforce-api ${escapeRegExp(command.split(' ')[0] as string)}`))
    expect(result.stdout).toContain('-h, --help')
  })

  it('seed --help and serve --help no longer fail as an unknown option (the regression of issue 11)', async () => {
    for (const command of ['seed', 'serve']) {
      const result = await cli(command, '--help')
      expect(result.code).toBe(0)
      expect(result.stderr).not.toContain('Unknown option')
    }
  })

  it('wins over everything else on the line, before any flag is checked or any database opened', async () => {
    const missing = join(dir, 'never-created.db')
    const result = await cli('keys', 'create', '--db', missing, '--bogus', '--help')
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^usage: workforce-api keys create/)
    expect(existsSync(missing)).toBe(false)
  })

  it('--help, -h and help show the overview with every command; help <command> <action> the action', async () => {
    for (const args of [['--help'], ['-h'], ['help']]) {
      const result = await cli(...args)
      expect(result.code).toBe(0)
      for (const command of ['seed', 'migrate', 'serve', 'keys', 'modules', 'webhooks']) expect(result.stdout).toMatch(new RegExp(`^  ${command} `, 'm'))
    }
    expect((await cli('help', 'keys', 'create')).stdout).toMatch(/^usage: workforce-api keys create/)
  })

  it('keys create --help lists every valid scope; webhooks create --help every event type', async () => {
    const keys = (await cli('keys', 'create', '--help')).stdout
    for (const scope of ALL_SCOPES) expect(keys).toContain(scope)
    const webhooks = (await cli('webhooks', 'create', '--help')).stdout
    for (const type of EVENT_TYPES) expect(webhooks).toContain(type)
  })

  it('no command prints the overview and exits 2; an unknown command or action exits 2 in one sentence and the usage', async () => {
    const bare = await cli()
    expect(bare.code).toBe(2)
    expect(bare.stdout).toContain('usage: workforce-api <command>')
    expectOneLine(await cli('frobnicate'), 2, `unknown command "frobnicate"; run 'workforce-api --help'`)
    const action = await cli('keys', 'frobnicate', '--db', 'x.db')
    expect(action.code).toBe(2)
    expect(action.stderr).toContain('unknown keys action "frobnicate"')
    expect(action.stderr).toContain("run 'workforce-api keys --help' for more")
  })

  it('a typo of a command, an action or a flag gets the one it most likely meant (issue 26); a missing action lists them', async () => {
    expectOneLine(await cli('kyes'), 2, `unknown command "kyes" (did you mean "keys"?); run 'workforce-api --help'`)
    const action = await cli('webhooks', 'lsit', '--db', 'x.db')
    expect(action.code).toBe(2)
    expect(action.stderr).toContain('unknown webhooks action "lsit" (did you mean "list"?)')
    const flag = await cli('keys', 'list', '--db', 'x.db', '--compnay', '1')
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain('unknown flag --compnay (did you mean --company?)')
    expect(flag.stderr).not.toContain('Unknown option')
    const far = await cli('keys', 'list', '--db', 'x.db', '--zzzzzzzz')
    expect(far.stderr).toContain('unknown flag --zzzzzzzz\n')
    const bare = await cli('keys')
    expect(bare.code).toBe(2)
    expect(bare.stderr).toMatch(/^workforce-api: keys needs an action: create, list, disable, enable, revoke\n/)
    expect(bare.stderr).not.toContain('""')
  })
})

describe('--version', () => {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version

  it.each([['--version'], ['-v']])('%s prints the version of package.json and exits 0', async (flag) => {
    const result = await cli(flag)
    expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
  })

  it("reads the installed package's package.json from dist/cli.js, wherever it is installed", async () => {
    // An app with the package copied into its node_modules (a manifest with a version of its
    // own); the package's dependencies resolve through a node_modules further up.
    const root = join(dir, 'installed')
    const installed = join(root, 'app', 'node_modules', 'fastify-workforce-api')
    mkdirSync(installed, { recursive: true })
    cpSync(join(ROOT, 'dist'), join(installed, 'dist'), { recursive: true, filter: (source) => !source.endsWith('.map') && !source.endsWith('.d.ts') && !source.endsWith('.d.cts') })
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>
    writeFileSync(join(installed, 'package.json'), JSON.stringify({ ...manifest, version: '9.8.7-installed' }))
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir')
    const result = await runScript(join(installed, 'dist', 'cli.js'), ['--version'], { cwd: join(root, 'app') })
    expect(result).toEqual({ code: 0, stdout: '9.8.7-installed\n', stderr: '' })
  })
})

describe('a database that does not exist or is not migrated', () => {
  const refusing: Array<[string, (db: string) => string[]]> = [
    ['serve', (db) => ['serve', '--db', db, '--port', '0']],
    ['keys list', (db) => ['keys', 'list', '--db', db]],
    ['keys create', (db) => ['keys', 'create', '--db', db, '--company', '1', '--scopes', 'all']],
    ['keys revoke', (db) => ['keys', 'revoke', '--db', db, '--key-id', '0000000000000000']],
    ['modules set', (db) => ['modules', 'set', '--db', db, '--company', '1', '--module', 'todo', '--active', 'true']],
    ['webhooks list', (db) => ['webhooks', 'list', '--db', db, '--company', '1']],
  ]

  it.each(refusing)('%s refuses a missing file, creates nothing, and says to run seed or migrate', async (_name, args) => {
    const db = join(dir, `missing-${_name.replace(' ', '-')}.db`)
    const result = await cli(...args(db))
    expectOneLine(result, 1, `no database at ${db}: create it with 'workforce-api migrate --db ${db}' (empty) or 'workforce-api seed --db ${db}' (demo data)`)
    expect(readdirSync(dir).filter((name) => name.startsWith(`missing-${_name.replace(' ', '-')}`))).toEqual([])
  })

  it.each(refusing)('%s refuses a SQLite file without our schema', async (_name, args) => {
    const db = join(dir, `empty-${_name.replace(' ', '-')}.db`)
    new Database(db).close()
    expectOneLine(await cli(...args(db)), 1, `${db} has no workforce-api schema: run 'workforce-api migrate --db ${db}' (empty) or 'workforce-api seed --db ${db}' (demo data) first`)
  })

  it('refuses a database migrated by an older version, naming what is pending', async () => {
    const db = join(dir, 'older.db')
    expect((await cli('migrate', '--db', db)).code).toBe(0)
    const file = new Database(db)
    file.prepare(`delete from wfa_migrations where name = '2026_11_23_0007_admin'`).run()
    file.close()
    expectOneLine(
      await cli('keys', 'list', '--db', db),
      1,
      `${db} is not migrated to this version of workforce-api (1 pending: 2026_11_23_0007_admin): run 'workforce-api migrate --db ${db}'`,
    )
  })

  it('migrate creates an empty, migrated database; then keys create works; migrate again has nothing to do', async () => {
    const db = join(dir, 'migrated.db')
    const first = await cli('migrate', '--db', db, '--json')
    expect(first.code, first.stderr).toBe(0)
    expect(lastJson(first.stdout).applied).toEqual([
      '2026_11_21_0001_initial',
      '2026_11_22_0002_writes',
      '2026_11_23_0003_invitations',
      '2026_11_23_0004_key_rate_limits',
      '2026_11_23_0005_webhooks',
      '2026_11_23_0006_list_versions',
      '2026_11_23_0007_admin',
      '2026_11_26_0008_endpoint_health',
      '2026_11_26_0009_per_company_user_ids',
      '2026_11_26_0010_list_row_counts',
      '2026_11_27_0011_event_feed',
      '2026_11_27_0012_usage_not_modified',
    ])
    expect(lastJson((await cli('migrate', '--db', db, '--json')).stdout)).toEqual({ applied: [] })
    // No data: the company is unknown, yet the database is accepted.
    expectOneLine(await cli('keys', 'create', '--db', db, '--company', '1', '--scopes', 'all'), 1, 'no company with id 1')
    expect((await cli('keys', 'list', '--db', db, '--json')).stdout.trim()).toBe('{"keys":[]}')
    const seeded = await cli('seed', '--db', db, '--json')
    expect(seeded.code, seeded.stderr).toBe(0)
    const created = await cli('keys', 'create', '--db', db, '--company', '1', '--scopes', 'users:read', '--json')
    expect(created.code, created.stderr).toBe(0)
    expect(lastJson(created.stdout).key).toMatch(/^owk_/)
  })

  it('--db :memory: is refused where the data must outlive the command', async () => {
    expectOneLine(await cli('keys', 'list', '--db', ':memory:'), 2, '--db :memory: is a new, empty database in every process')
  })
})

describe('one-line failures', () => {
  it('seed into a directory that does not exist', async () => {
    const db = join(dir, 'no', 'such', 'directory', 'demo.db')
    expectOneLine(await cli('seed', '--db', db), 1, `cannot create ${db}: the directory ${join(dir, 'no', 'such', 'directory')} does not exist`)
  })

  it('a directory given as the database', async () => {
    expectOneLine(await cli('keys', 'list', '--db', dir), 2, `${dir} is a directory; --db takes a database file`)
  })

  it('a file that is not a SQLite database', async () => {
    const db = join(dir, 'notes.txt')
    writeFileSync(db, 'these are not the pages you are looking for\n'.repeat(200))
    expectOneLine(await cli('keys', 'list', '--db', db), 1, `${db}: the file is not a SQLite database`)
  })

  it.each([
    ['keys list', ['keys', 'list']],
    ['seed', ['seed']],
    ['migrate', ['migrate']],
  ])('%s on a Postgres server that refuses the connection: one line; --verbose adds the stack', async (_name, command) => {
    const db = 'postgres://postgres:secret@127.0.0.1:1/workforce'
    const plain = await cli(...command, '--db', db)
    expectOneLine(plain, 1, 'cannot connect to Postgres at 127.0.0.1:1: connection refused (is the server running, on this port?)')
    expect(plain.stderr).not.toContain('secret')
    const verbose = await cli(...command, '--db', db, '--verbose')
    expect(verbose.code).toBe(1)
    expect(verbose.stderr.split('\n')[0]).toBe(plain.stderr.trimEnd())
    expect(verbose.stderr).toMatch(/^\s+at /m)
    expect(verbose.stderr).toContain('ECONNREFUSED')
  })
})

describe('keys create --expires-at', () => {
  let db: string
  beforeAll(async () => {
    db = join(dir, 'expiry.db')
    expect((await cli('seed', '--db', db)).code).toBe(0)
  })

  it('refuses an instant in the past with one line and exit 2, creating no key', async () => {
    expectOneLine(
      await cli('keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--expires-at', '2020-01-01T00:00:00Z'),
      2,
      '--expires-at 2020-01-01T00:00:00Z is in the past',
    )
    expect(lastJson((await cli('keys', 'list', '--db', db, '--json')).stdout)).toEqual({ keys: [] })
  })

  it('accepts an instant in the future', async () => {
    const created = await cli('keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--expires-at', '2099-01-01T00:00:00+01:00', '--json')
    expect(created.code, created.stderr).toBe(0)
    const [key] = lastJson((await cli('keys', 'list', '--db', db, '--json')).stdout).keys
    expect(key.expires_at).toBe('2098-12-31T23:00:00.000Z')
  })

  it('refuses an instant past 9999-12-31T23:59:59.999Z once in UTC, naming the bound; accepts the bound itself (issue 21)', async () => {
    const before = lastJson((await cli('keys', 'list', '--db', db, '--json')).stdout).keys.length
    expectOneLine(
      await cli('keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--expires-at', '9999-12-31T23:59:59-01:00'),
      2,
      '--expires-at must be an ISO 8601 timestamp with Z or an offset, at the latest 9999-12-31T23:59:59.999Z once in UTC',
    )
    expect(lastJson((await cli('keys', 'list', '--db', db, '--json')).stdout).keys).toHaveLength(before)
    const created = await cli('keys', 'create', '--db', db, '--company', '1', '--scopes', 'all', '--expires-at', '9999-12-31T23:59:59.999Z', '--json')
    expect(created.code, created.stderr).toBe(0)
    const { key_id: keyId } = lastJson(created.stdout) as { key_id: string }
    const listed = lastJson((await cli('keys', 'list', '--db', db, '--json')).stdout).keys as Array<{ key_id: string; expires_at: string }>
    expect(listed.find((key) => key.key_id === keyId)?.expires_at).toBe('9999-12-31T23:59:59.999Z')
  })
})

describe('seed progress', () => {
  it('--json prints no progress: stdout is the JSON alone (issue 26); stderr is empty', async () => {
    const result = await cli('seed', '--db', join(dir, 'quiet.db'), '--scale', '2000', '--json')
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe('')
    const lines = result.stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(JSON.parse(lines[0] as string).companies).toHaveLength(3)
  })

  it('without --json prints the companies and the rows per second', async () => {
    const result = await cli('seed', '--db', join(dir, 'told.db'), '--scale', '2000')
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.trim().split('\n')
    expect(lines).toHaveLength(4)
    expect(lines[3]).toMatch(/^18,420 rows in \d+\.\d s \([\d,]+ rows\/s\)$/)
  })

  it.skipIf(!hasScript)('on a terminal draws a bar with rows per second, and with --json draws none', () => {
    const drawn = inTerminal([process.execPath, CLI, 'seed', '--db', join(dir, 'terminal.db'), '--scale', '2000'])
    expect(drawn).toMatch(/seeding .*\d+% \| [\d,]+\/18,420 rows \| [\d,]+ rows\/s/)
    const quiet = inTerminal([process.execPath, CLI, 'seed', '--db', join(dir, 'terminal-json.db'), '--scale', '2000', '--json'])
    expect(quiet).not.toContain('seeding')
    expect(quiet).not.toContain('\u001b[')
    expect(quiet).toContain('"companies"')
  })
})
