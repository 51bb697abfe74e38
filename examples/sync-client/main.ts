/**
 * `WORKFORCE_API_KEY=owk_… npm run sync-client -- --url http://127.0.0.1:3000/api/public [--db mirror.db] [--full]`:
 * mirrors a company's data into a local SQLite file (README.md). `--key -` reads the key from
 * standard input; `--key owk_…` works too, with a warning (the key shows in `ps` and npm's echo).
 */
import { keyOnCommandLineWarning, runCli } from './cli.js'

const argv = process.argv.slice(2)
const warning = keyOnCommandLineWarning(argv)
if (warning !== null) process.stderr.write(warning)
process.exitCode = await runCli(argv)
