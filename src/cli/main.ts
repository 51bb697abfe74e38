#!/usr/bin/env node
import { keys, modules, seed, serve, type CliOutput } from './commands.js'
import { CliError } from './open-adapter.js'
import { webhooks } from './webhooks.js'

const USAGE = `usage: workforce-api <command> [flags]

commands:
  seed      --db X [--scale N] [--json]            migrate and load the demo data set
  keys      create|list|disable|enable|revoke ...  manage API keys
  modules   set --db X --company ID --module M --active true|false
  webhooks  create --db X --company ID --url U --events a,b|all [--description S] [--allow-private] [--json]
            list --db X --company ID [--json]
            enable|disable|delete|rotate --db X --id ID [--json]
            deliveries --db X --id ID [--limit N] [--before ID] [--json]
                                                   manage webhook endpoints; create and rotate print
                                                   the signing secret once, as the last line {"id","secret"}
  serve     --db X [--port N] [--host H] [--redis URL] [--rate-limit N] ...   start the API server
            [--allow-private-webhooks]             deliver to http and private addresses (development only)
            [--webhook-retry-schedule 5s,5m,...]   delays between delivery attempts
            [--no-dispatcher]                      serve the API only; other instances deliver

--db is a SQLite file path or a postgres:// URL.
Webhook signing secrets are sealed with WORKFORCE_WEBHOOK_KEY (base64 of 32 bytes). If it is
unset, a SQLite database uses the key file <db>.webhook-key, created on first use; a Postgres
database needs the variable, the same for every command and serve instance.`

const out: CliOutput = {
  line: (text) => process.stdout.write(`${text}\n`),
  json: (value) => process.stdout.write(`${JSON.stringify(value)}\n`),
  note: (text) => process.stderr.write(`workforce-api: ${text}\n`),
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
    case 'webhooks':
      return webhooks(args, out)
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
