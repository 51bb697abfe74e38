import { join } from 'node:path'
import { expect, it } from 'vitest'
import { postgresColumnTypes } from '../../adapters/postgres/postgres-codec.js'
import { createMigrations } from '../../adapters/sql/migrations/index.js'
import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { lastJson, runNode } from '../helpers/cli.js'

// The built CLI against a real Postgres database (`--db postgres://…`), as an operator runs it.
const CLI = join(import.meta.dirname, '../../dist/cli.js')

const cli = (...args: string[]) => runNode(args)

describePostgres('workforce-api CLI on Postgres', () => {
  const database = useTestDatabase()

  it('seeds, manages keys and modules with --db postgres://', async () => {
    const db = database.current.url
    const seeded = await cli('seed', '--db', db, '--json')
    expect(seeded.code, seeded.stderr).toBe(0)
    expect(lastJson(seeded.stdout).companies.map((c: { id: number }) => c.id)).toEqual([1, 2, 3])

    const again = await cli('seed', '--db', db)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already holds seed data')

    const created = await cli('keys', 'create', '--db', db, '--company', '2', '--scopes', 'users:read', '--json')
    expect(created.code, created.stderr).toBe(0)
    const { key_id } = lastJson(created.stdout)
    const revoked = await cli('keys', 'revoke', '--db', db, '--key-id', key_id, '--json')
    expect(lastJson(revoked.stdout).key).toMatchObject({ key_id, state: 'revoked', company_id: 2 })
    const listed = await cli('keys', 'list', '--db', db, '--company', '2', '--json')
    expect(lastJson(listed.stdout).keys.map((k: { key_id: string }) => k.key_id)).toEqual([key_id])

    const modules = await cli('modules', 'set', '--db', db, '--company', '3', '--module', 'todo', '--active', 'true', '--json')
    expect(lastJson(modules.stdout)).toEqual({ company_id: 3, module: 'todo', active: true })
  })
})

describePostgres('workforce-api CLI on a Postgres database without the schema (issue 11)', () => {
  const database = useTestDatabase()

  it('keys and serve refuse it with the command to run; migrate creates the schema; then keys work', async () => {
    const db = database.current.url
    for (const args of [['keys', 'list'], ['serve', '--port', '0']]) {
      const refused = await cli(...args, '--db', db)
      expect(refused.code).toBe(1)
      expect(refused.stderr.trim()).toBe(`workforce-api: ${db} has no workforce-api schema: run 'workforce-api migrate --db ${db}' (empty) or 'workforce-api seed --db ${db}' (demo data) first`)
    }
    const migrated = await cli('migrate', '--db', db, '--json')
    expect(migrated.code, migrated.stderr).toBe(0)
    expect(lastJson(migrated.stdout).applied).toEqual(Object.keys(createMigrations(postgresColumnTypes)))
    expect(lastJson((await cli('keys', 'list', '--db', db, '--json')).stdout)).toEqual({ keys: [] })
  })

  it('a database that does not exist is one line that says to create it', async () => {
    const url = new URL(database.current.url)
    url.pathname = '/wfa_no_such_database'
    const result = await cli('keys', 'list', '--db', url.toString())
    expect(result.code).toBe(1)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('database "wfa_no_such_database" does not exist: create it (createdb)')
  })
})
