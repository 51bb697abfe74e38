// The package as `npm pack` makes it, packed once and shared: by test files in one run, and by
// runs until the packed input changes. The folder is keyed by the commit, the manifest, the
// packed docs and the mtime of every file in dist, so a rebuild or an edit packs afresh.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { PackedPackage } from '../package/consumer-lock.js'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface PackedTarball {
  /** The tarball's absolute path. */
  tarball: string
  /** Its file name, e.g. `fastify-workforce-api-0.1.0.tgz`. */
  filename: string
  integrity: string
  /** The packed paths (`dist/index.js`, `README.md`…). */
  files: string[]
  manifest: PackedPackage['manifest']
}

/**
 * Runs `command` with the environment of an outer `npm test` script stripped of what would point
 * an inner npm at our project (`npm_config_local_prefix`, `npm_package_*`, the lifecycle), but
 * keeping its cache and registry settings, so an offline install finds our cache.
 */
export function runQuietly(command: string, args: readonly string[], cwd: string, extraEnv: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): Promise<{ stdout: string; stderr: string }> {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_(?!config_)|^npm_config_local_prefix$/i.test(name))), ...extraEnv }
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${[command, ...args].join(' ')} (in ${cwd}) failed: ${error.message}\n${stdout}\n${stderr}`))
      else resolve({ stdout, stderr })
    })
  })
}

export const npmCommand = process.platform === 'win32' ? 'npm.cmd' : 'npm'

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true })
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name))
}

/** What the tarball is made of: a change to any of it gives another key. */
async function inputKey(): Promise<string> {
  const hash = createHash('sha256')
  const head = await runQuietly('git', ['rev-parse', 'HEAD'], ROOT).then((run) => run.stdout.trim(), () => 'no-git')
  hash.update(head)
  for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE']) hash.update(await readFile(join(ROOT, file)).catch(() => Buffer.alloc(0)))
  for (const file of (await filesUnder(join(ROOT, 'docs'))).sort()) hash.update(`${file}:${(await stat(file)).mtimeMs}`)
  for (const file of (await filesUnder(join(ROOT, 'dist'))).sort()) hash.update(`${file}:${(await stat(file)).mtimeMs}`)
  return hash.digest('hex').slice(0, 16)
}

let packing: Promise<PackedTarball> | undefined

/**
 * The packed package, from the cache folder when its inputs are unchanged, else packed now
 * (`npm pack --ignore-scripts`: `prepack` would rebuild dist under other test files' feet, so
 * dist must be built first, as `npm test` does). Safe to call from test files running side by
 * side: each packs into its own folder and the first to finish renames it into place.
 */
export function packedTarball(): Promise<PackedTarball> {
  packing ??= pack()
  return packing
}

async function pack(): Promise<PackedTarball> {
  for (const target of ['dist/index.js', 'dist/index.cjs', 'dist/cli.js']) {
    if (!existsSync(join(ROOT, target))) throw new Error(`${target} is missing: run \`npm run build\` first (\`npm test\` does)`)
  }
  const base = join(tmpdir(), 'wfa-packed')
  await mkdir(base, { recursive: true })
  const dir = join(base, await inputKey())
  const record = join(dir, 'packed.json')
  if (!existsSync(record)) {
    const work = await mkdtemp(join(base, 'work-'))
    try {
      const { stdout } = await runQuietly(npmCommand, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT)
      const [packed] = JSON.parse(stdout) as Array<{ filename: string; integrity: string; files: Array<{ path: string }> }>
      const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as PackedTarball['manifest']
      await writeFile(join(work, 'packed.json'), JSON.stringify({ filename: packed!.filename, integrity: packed!.integrity, files: packed!.files.map((f) => f.path), manifest }))
      // Another process may have put the same folder in place meanwhile: theirs is as good.
      await rename(work, dir).catch(() => rm(work, { recursive: true, force: true }))
    } catch (error) {
      await rm(work, { recursive: true, force: true })
      throw error
    }
  }
  const saved = JSON.parse(await readFile(record, 'utf8')) as Omit<PackedTarball, 'tarball'>
  return { ...saved, tarball: join(dir, saved.filename) }
}
