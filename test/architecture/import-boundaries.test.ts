import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

// Regressions of issue 23: the SQL adapters' bulk loaders imported the seed generator (storage
// depending on demo data), and the ground floor's calendar took its `Day` from the ports.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SPECIFIER = /(?:^|\n)\s*(import|export)\s+(type\s+)?[^'"]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g

/** Every `.ts` file below `folder` (relative to the repository), as repository paths. */
function sources(folder: string): string[] {
  const here = join(ROOT, folder)
  if (statSync(here).isFile()) return [folder]
  return readdirSync(here).flatMap((name) => sources(join(folder, name))).filter((path) => path.endsWith('.ts'))
}

interface Imported {
  /** A package name, or the repository path of the file imported. */
  target: string
  typeOnly: boolean
}

function importsOf(file: string): Imported[] {
  const text = readFileSync(join(ROOT, file), 'utf8')
  return [...text.matchAll(SPECIFIER)].map((match) => {
    const specifier = (match[3] ?? match[4]) as string
    const target = specifier.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), specifier)).replace(/\.js$/, '.ts') : specifier
    return { target, typeOnly: match[2] !== undefined }
  })
}

/**
 * Every repository file reached from `files` by following relative imports (type-only ones too),
 * each with the chain of imports that first reached it.
 */
function reachedFrom(files: readonly string[]): { target: string; chain: string[] }[] {
  const chains = new Map<string, string[]>(files.map((file) => [file, [file]]))
  const queue = [...files]
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    const chain = chains.get(file) as string[]
    for (const { target } of importsOf(file)) {
      if (!target.endsWith('.ts') || chains.has(target)) continue
      chains.set(target, [...chain, target])
      queue.push(target)
    }
  }
  return [...chains].map(([target, chain]) => ({ target, chain }))
}

describe('import boundaries', () => {
  it('no adapter imports the seed generator or anything else under src/seed/', () => {
    const found = sources('adapters').flatMap((file) => importsOf(file).filter(({ target }) => target.startsWith('src/seed/')).map(({ target }) => `${file} → ${target}`))
    expect(found).toEqual([])
  })

  it('the ground floor (src/errors.ts, src/money.ts, src/time/) imports packages and itself only', () => {
    const floor = [...sources('src/errors.ts'), ...sources('src/money.ts'), ...sources('src/time')]
    const found = floor.flatMap((file) =>
      importsOf(file)
        .filter(({ target }) => target.includes('/') && (target.startsWith('src/') || target.startsWith('adapters/')) && !floor.includes(target))
        .map(({ target }) => `${file} → ${target}`),
    )
    expect(found).toEqual([])
  })

  it('nothing under src/api reaches src/webhooks, directly or through other files: resources do not import delivery code', () => {
    // Regression of issue 23: the write routes imported `renderEvent` from src/webhooks while
    // src/webhooks rendered events with the resources' schemas from src/api, a cycle.
    // Each import that crosses into src/webhooks, with the chain from src/api that reaches it.
    const found = reachedFrom(sources('src/api'))
      .filter(({ target }) => !target.startsWith('src/webhooks/'))
      .flatMap(({ target: file, chain }) =>
        importsOf(file)
          .filter(({ target }) => target.startsWith('src/webhooks/'))
          .map(({ target }) => [...chain, target].join(' → ')),
      )
    expect(found).toEqual([])
  })

  it('src/events (event names and ids) imports packages and itself only, so producers and delivery may both import it', () => {
    const found = sources('src/events').flatMap((file) =>
      importsOf(file)
        .filter(({ target }) => (target.startsWith('src/') || target.startsWith('adapters/')) && !target.startsWith('src/events/'))
        .map(({ target }) => `${file} → ${target}`),
    )
    expect(found).toEqual([])
  })

  it('a migration imports kysely and, for its types only, the column-type shape: never application code', () => {
    const migrations = sources('adapters/sql/migrations').filter((file) => !file.endsWith('/index.ts'))
    expect(migrations.length).toBeGreaterThanOrEqual(10)
    const found = migrations.flatMap((file) =>
      importsOf(file)
        .filter(({ target, typeOnly }) => target !== 'kysely' && !(target === 'adapters/sql/codec.ts' && typeOnly))
        .map(({ target }) => `${file} → ${target}`),
    )
    expect(found).toEqual([])
  })
})
