#!/usr/bin/env node
import { keys, modules, seed, serve, type CliOutput } from './commands.js'
import { CliError } from './open-adapter.js'

const USAGE = `usage: workforce-api <command> [flags]

commands:
  seed     --db X [--scale N] [--json]            migrate and load the demo data set
  keys     create|list|disable|enable|revoke ...  manage API keys
  modules  set --db X --company ID --module M --active true|false
  serve    --db X [--port N] [--host H] [--redis URL] [--rate-limit N] ...   start the API server

--db is a SQLite file path.`

const out: CliOutput = {
  line: (text) => process.stdout.write(`${text}\n`),
  json: (value) => process.stdout.write(`${JSON.stringify(value)}\n`),
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv
  switch (command) {
    case 'seed':
      return seed(args, out)
    case 'keys':
      return keys(args, out)
    case 'modules':
      return modules(args, out)
    case 'serve': {
      const server = await serve(args, out)
      const stop = (signal: NodeJS.Signals) => {
        process.stderr.write(`workforce-api: ${signal}: finishing in-flight requests, then exiting\n`)
        server.close().then(
          () => process.exit(0),
          (error: unknown) => {
            process.stderr.write(`workforce-api: shutdown failed: ${String(error)}\n`)
            process.exit(1)
          },
        )
      }
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
      return
    }
    case undefined:
    case '--help':
    case 'help':
      out.line(USAGE)
      if (command === undefined) process.exitCode = 2
      return
    default:
      throw new CliError(`unknown command "${command}"\n${USAGE}`, 2)
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof CliError) {
    process.stderr.write(`workforce-api: ${error.message}\n`)
    process.exitCode = error.exitCode
  } else {
    process.stderr.write(`workforce-api: ${(error as Error).stack ?? String(error)}\n`)
    process.exitCode = 1
  }
})
