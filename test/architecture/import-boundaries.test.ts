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
