import { createServer } from 'node:net'
import { CliError } from './open-adapter.js'

/** `host:port` as a person types it: an IPv6 address in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`
}

/**
 * Binds `host:port` for a moment and lets it go, so that `serve` refuses an address it cannot
 * listen on (a port in use, a `--host` that is not this machine's) in one line, before it opens
 * the database or creates a webhook key file. `listen()` can still lose the port to another
 * process in between; `listenRefusal` words that failure the same way.
 *
 * @throws CliError naming the address and the flag that changes it
 */
export async function checkListenAddress(host: string, port: number): Promise<void> {
  const probe = createServer()
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once('error', reject)
      probe.listen({ host, port }, () => resolve())
    })
  } catch (error) {
    throw listenRefusal(error, host, port) ?? error
  } finally {
    await new Promise<void>((resolve) => (probe.listening ? probe.close(() => resolve()) : resolve()))
  }
}

/** A failure to listen on `host:port`, as one line that says what to change; `null` if it is not one. */
export function listenRefusal(error: unknown, host: string, port: number): CliError | null {
  const code = (error as NodeJS.ErrnoException | null)?.code
  const address = hostPort(host, port)
  switch (code) {
    case 'EADDRINUSE':
      return new CliError(`${address} is already in use (another server listens there): stop it, or pick another port with --port <n> (--port 0 takes any free one)`)
    case 'EACCES':
      return new CliError(`${address}: permission denied (ports below 1024 need privileges): pick another port with --port <n>`)
    case 'EADDRNOTAVAIL':
      return new CliError(`--host ${host} is not an address of this machine: use 127.0.0.1, 0.0.0.0 (every interface) or one of its own addresses`, 2)
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new CliError(`--host ${host} is neither an IP address nor a host name that resolves`, 2)
    default:
      return null
  }
}
