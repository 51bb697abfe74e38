import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Fails a test that received an API response the OpenAPI document does not describe.
    setupFiles: ['test/helpers/openapi-setup.ts'],
    // Suites that need Postgres print why they were skipped, or fail under CI=true.
    reporters: ['default'],
  },
})
