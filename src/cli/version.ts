import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const PACKAGE_NAME = 'fastify-workforce-api'

/**
 * This package's version, read at run time from its package.json: the first one named
 * `fastify-workforce-api` above this file. That is `<package>/package.json` from the built
 * `dist/cli.js` (or a chunk beside it), installed or not, and the repository's from `src/cli/`.
 * Read, not bundled: it reports the package that is installed, and the bundle carries no copy of
 * the manifest.
 */
export function packageVersion(from: string = import.meta.url): string {
  let directory = dirname(fileURLToPath(from))
  for (;;) {
    const version = versionIn(join(directory, 'package.json'))
    if (version !== null) return version
    const parent = dirname(directory)
    if (parent === directory) return 'unknown'
    directory = parent
  }
}

function versionIn(file: string): string | null {
  try {
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown }
    return manifest.name === PACKAGE_NAME && typeof manifest.version === 'string' ? manifest.version : null
  } catch {
    return null
  }
}
