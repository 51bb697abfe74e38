import { describe, expect, it } from 'vitest'
import { requireDriver } from '../../adapters/sql/require-driver.js'

// The packed package without a driver is checked end to end in test/package/consumer.test.ts.
describe('requireDriver', () => {
  it('returns an installed driver', () => {
    const pg = requireDriver<typeof import('pg')>('pg', 'fastify-workforce-api/postgres')
    expect(typeof pg.Pool).toBe('function')
  })

  it('names the package to install when the driver is missing, with the original error as cause', () => {
    let thrown: unknown
    try {
      requireDriver('wfa-driver-that-is-not-installed', 'fastify-workforce-api/example')
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(Error)
    expect((thrown as Error).message).toBe('fastify-workforce-api/example needs wfa-driver-that-is-not-installed: npm install wfa-driver-that-is-not-installed')
    expect((thrown as Error).cause).toMatchObject({ code: 'MODULE_NOT_FOUND' })
  })
})
