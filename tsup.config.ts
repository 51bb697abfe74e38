import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'adapters/memory/index': 'adapters/memory/index.ts',
    'adapters/sqlite/index': 'adapters/sqlite/index.ts',
    // Started by SqliteReadPool as a worker thread: it must exist as a file of its own, beside
    // the adapter's entry (`readWorkerEntry()` looks there and under `dist/adapters/sqlite/`).
    'adapters/sqlite/sqlite-read-worker': 'adapters/sqlite/sqlite-read-worker.ts',
    'adapters/postgres/index': 'adapters/postgres/index.ts',
    'conformance/index': 'src/conformance/index.ts',
    cli: 'src/cli/main.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // `import.meta.url` in the CommonJS build (SqliteReadPool finds its worker file with it).
  shims: true,
  // Native and peer-provided modules stay external so the host's copies are used.
  external: ['better-sqlite3', 'pg', 'vitest'],
})
