/**
 * A second process for the cross-process `begin` tests: opens the SQLite file named in argv,
 * waits until the shared start instant, then fires `rounds` concurrent `begin`s on each of
 * `slotCount` slots (`slotOf(0..n-1)`, interleaved), at `NOW + minutesLater`. Prints the
 * outcomes per slot as one JSON line: `{ "<slot>": { "started": 1, "in_flight": 9 } }`.
 *
 * Usage: node --import tsx begin-worker.ts <filename> <label> <slotCount> <rounds> <startAtMs> <minutesLater>
 */
import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { beginRequest, minutes, slotOf } from '../helpers/write-fixtures.js'

if (process.argv.length !== 8) {
  throw new Error('usage: begin-worker.ts <filename> <label> <slotCount> <rounds> <startAtMs> <minutesLater>')
}
const [filename, label, slotCount, rounds, startAt, minutesLater] = process.argv.slice(2) as [string, string, string, string, string, string]
const now = minutes(Number(minutesLater))
// The test migrated the file already: the workers must not race each other over the schema.
const adapter = await openSqliteAdapter({ filename, migrate: false })
await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(startAt) - Date.now())))

const attempts: Array<Promise<{ slot: string; state: string }>> = []
for (let round = 0; round < Number(rounds); round++) {
  for (let index = 0; index < Number(slotCount); index++) {
    const slot = slotOf(index)
    const token = `${label}-${round}-${index}`
    attempts.push(adapter.idempotency.begin(beginRequest(slot, { token, now })).then((result) => ({ slot, state: result.state })))
  }
}
const tally: Record<string, Record<string, number>> = {}
for (const { slot, state } of await Promise.all(attempts)) {
  const ofSlot = (tally[slot] ??= {})
  ofSlot[state] = (ofSlot[state] ?? 0) + 1
}
await adapter.close()
process.stdout.write(`${JSON.stringify(tally)}\n`)
