import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'adapters/memory/index': 'adapters/memory/index.ts',
    'adapters/sqlite/index': 'adapters/sqlite/index.ts',
    'adapters/postgres/index': 'adapters/postgres/index.ts',
    'conformance/index': 'src/conformance/index.ts',
    cli: 'src/cli/main.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // Native and peer-provided modules stay external so the host's copies are used.
  external: ['better-sqlite3', 'pg', 'vitest'],
})
