/**
 * `npm run sync-client -- --url http://127.0.0.1:3000/api/public --key owk_… [--db mirror.db] [--full]`:
 * mirrors a company's data into a local SQLite file (README.md).
 */
import { runCli } from './cli.js'

process.exitCode = await runCli(process.argv.slice(2))
