/**
 * Child-process entry of the hand-written baseline (bench/pages-baseline.ts): listens on
 * 127.0.0.1:<port> and serves until SIGTERM, like `workforce-api serve` beside it.
 *
 *   node --import tsx bench/pages-baseline-server.ts <sqlite file | postgres url> <port>
 */
import { buildPagesBaseline } from './pages-baseline.js'

const [db, port] = process.argv.slice(2) as [string, string]
const { app, close } = await buildPagesBaseline(db)
await app.listen({ host: '127.0.0.1', port: Number(port) })
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  })
}
