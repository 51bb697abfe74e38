import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Suites that need Postgres print why they were skipped, or fail under CI=true.
    reporters: ['default'],
  },
})
