import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

/** How to start a worker: a file, or (from TypeScript source) a bootstrap to evaluate. */
export interface WorkerEntry {
  entry: URL | string
  eval: boolean
}

/**
 * Where a worker's entry file is, wherever the caller runs. `here` is the caller's
 * `import.meta.url` (once bundled, the chunk it landed in), `name` the entry's name without its
 * extension and `folder` where tsup puts that entry under `dist/`:
 * - bundled: `dist/<folder>/<name>.{js,cjs}` (an entry of its own), seen from the same folder,
 *   from a chunk at `dist/`, or from one of the CLI's chunks at `dist/cli/`;
 * - from source (tsx, vitest): `./<name>.ts` beside the caller. Node 20 runs neither a `.ts`
 *   worker nor `--import` hooks in workers, so the bootstrap registers tsx's CommonJS hook itself
 *   (tsx is a dev dependency; source only runs where it is installed).
 * The read pool's and the seed's workers are found this way; `what` names the caller in the error.
 */
export function workerEntry(here: string, name: string, folder: string, what: string): WorkerEntry {
  const extension = /\.(ts|cjs|mjs|js)$/.exec(new URL(here).pathname)?.[1] ?? 'js'
  const file = `${name}.${extension}`
  const candidates = [new URL(`./${file}`, here), new URL(`./${folder}/${file}`, here), new URL(`../${folder}/${file}`, here)]
  const url = candidates.find((candidate) => existsSync(fileURLToPath(candidate)))
  if (url === undefined) throw new Error(`${what}: worker entry not found; looked for ${candidates.map((c) => fileURLToPath(c)).join(', ')}`)
  if (extension !== 'ts') return { entry: url, eval: false }
  const tsx = createRequire(here).resolve('tsx/cjs/api')
  return { entry: `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(fileURLToPath(url))})`, eval: true }
}
