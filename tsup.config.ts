import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { defineConfig, type Options } from 'tsup'

/** The package's entry points, one per `exports` subpath that has both formats. */
const LIBRARY = {
  index: 'src/index.ts',
  'adapters/memory/index': 'adapters/memory/index.ts',
  'adapters/sqlite/index': 'adapters/sqlite/index.ts',
  'adapters/postgres/index': 'adapters/postgres/index.ts',
}

/**
 * Started by SqliteReadPool as a worker thread: it must exist as a file of its own, beside the
 * adapter's entry (`readWorkerEntry()` looks there and under `dist/adapters/sqlite/`), in the
 * format of the adapter that starts it. No types: nothing imports it.
 */
const WORKER = { 'adapters/sqlite/sqlite-read-worker': 'adapters/sqlite/sqlite-read-worker.ts' }

/** Started by `seedSqliteDatabase` (the CLI's `seed`, ESM only) as a worker thread, found the same way. */
const SEED_WORKER = { 'seed/sqlite-seed-worker': 'src/seed/sqlite-seed-worker.ts' }

/**
 * What `require('fastify-workforce-api/conformance')` loads: the suite is ESM only, because
 * vitest is (vitest's own `index.cjs` does the same). Its types are the suite's, emitted as
 * `.d.cts` by the CommonJS build, so a CommonJS-mode TypeScript test file (which vitest loads as
 * ESM anyway) type-checks.
 */
const CONFORMANCE_REQUIRE_CJS = `'use strict'
throw new Error(
  'fastify-workforce-api/conformance is an ES module, like vitest, which runs it: import it from a test file ' +
    "(import { describeStorageConformance } from 'fastify-workforce-api/conformance'), or use import() from CommonJS. " +
    'It cannot be loaded with require().',
)
`

const shared: Options = {
  target: 'node20',
  // `import.meta.url` in the CommonJS build (SqliteReadPool finds its worker file with it, and
  // the adapters load their driver with `createRequire(import.meta.url)`).
  shims: true,
  // Code that several entries use goes to chunks in both formats: one copy per format of each
  // class and of any module state, instead of one per entry (CommonJS splitting is off by default).
  splitting: true,
  // Stack traces are readable without them (the output is not minified), and with the sources
  // inlined they were most of the tarball (docs/decisions.md, "Packaging (issue 11)").
  sourcemap: false,
  // The output folder is emptied once, below: two configs cleaning it in parallel would race.
  clean: false,
  // Optional peers, loaded by the adapter that needs them (and vitest by the conformance suite).
  external: ['better-sqlite3', 'pg', 'vitest'],
}

/**
 * Packages bundled into the CLI's own chunks rather than loaded from node_modules: the CLI starts
 * a process per command, and these two came to 465 module files for `keys list`, most of its
 * start-up (0.66 → 0.41 s of CPU). The library keeps them external: a host's Kysely must be
 * the one we use (docs/decisions.md, "The CLI carries its own copy").
 */
const CLI_BUNDLED = ['kysely', '@sinclair/typebox']

export default defineConfig((): Options[] => {
  rmSync('dist', { recursive: true, force: true })
  return [
    {
      ...shared,
      // ESM: the library, the conformance suite and the workers, sharing the library's chunks.
      entry: { ...LIBRARY, ...WORKER, ...SEED_WORKER, 'conformance/index': 'src/conformance/index.ts' },
      format: ['esm'],
    },
    {
      ...shared,
      // The CLI (`dist/cli.js`), with Kysely and TypeBox inside its own chunks, in `dist/cli/`:
      // a process of its own, whose classes and module state never meet a host's (CLI_BUNDLED).
      entry: { cli: 'src/cli/main.ts' },
      format: ['esm'],
      noExternal: CLI_BUNDLED,
      esbuildOptions(options) {
        options.chunkNames = 'cli/[name]-[hash]'
      },
    },
    {
      ...shared,
      // CommonJS: the library. The CLI is the `bin` (ESM); the suite is ESM only, with types
      // for CommonJS-mode test files and a `require` entry that says how to load it.
      entry: { ...LIBRARY, ...WORKER },
      format: ['cjs'],
      onSuccess: async () => {
        mkdirSync('dist/conformance', { recursive: true })
        writeFileSync('dist/conformance/require.cjs', CONFORMANCE_REQUIRE_CJS)
      },
    },
    {
      ...shared,
      // The types, `.d.ts` and `.d.cts`, from one TypeScript program: a declaration build per
      // format checked the same program twice, and was most of the build's time (issue 26).
      entry: { ...LIBRARY, 'conformance/index': 'src/conformance/index.ts' },
      format: ['esm', 'cjs'],
      dts: { only: true },
    },
  ]
})
