/**
 * Another process holding a write transaction: opens the SQLite file named in argv, starts a
 * write transaction, prints `open`, keeps it open for `holdMs`, completes `slot` for `token`
 * inside it, commits, and prints `{"completed":<bool>}`.
 *
 * Usage: node --import tsx complete-worker.ts <filename> <slot> <token> <holdMs>
 */
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { NOW } from '../helpers/write-fixtures.js'

if (process.argv.length !== 6) throw new Error('usage: complete-worker.ts <filename> <slot> <token> <holdMs>')
const [filename, slot, token, holdMs] = process.argv.slice(2) as [string, string, string, string]
const adapter = await openSqliteAdapter({ filename, migrate: false })
const completed = await adapter.writes.transaction(async (tx) => {
  process.stdout.write('open\n')
  await new Promise((resolve) => setTimeout(resolve, Number(holdMs)))
  return tx.completeIdempotency(slot, token, { status: 201, headers: { location: '/v1/todos/1' }, body: '{"id":1}' }, NOW)
})
await adapter.close()
process.stdout.write(`${JSON.stringify({ completed })}\n`)
