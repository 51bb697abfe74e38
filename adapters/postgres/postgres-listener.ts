import type * as pg from 'pg'
import { pgDriver } from './postgres-driver.js'

/** Waits after a lost connection before listening again: 100 ms, doubling, at most 2 s. */
const RECONNECT_MIN_MS = 100
const RECONNECT_MAX_MS = 2_000

export interface PostgresListenerOptions {
  /** Opens the listener's own connection: a LISTEN would pin one of a pool's. */
  connection: pg.ClientConfig
  channel: string
  /** Each notification on `channel`, with its payload (`''` when it has none). */
  onMessage: (payload: string) => void
  /** LISTEN is in place again after a lost connection: notifications sent meanwhile were missed. */
  onReconnect: () => void
  /** A connection's error, or a failed attempt to listen again (the first attempt's rejects `ready` instead). */
  onError: (error: unknown) => void
}

export interface PostgresListener {
  /** Settles once the first LISTEN is in place; if it fails, rejects and the listener is stopped. */
  readonly ready: Promise<void>
  /** Ends the connection and any pending retry; safe to call more than once, and before `ready`. */
  readonly stop: () => Promise<void>
}

/**
 * LISTEN on a channel on a `pg.Client` of its own. When the connection is lost it listens again
 * with backoff (100 ms, doubling, at most 2 s) and then calls `onReconnect`.
 *
 * @example
 * const listener = startPostgresListener({ connection, channel: 'wfa_webhooks', onMessage: () => wake(), onReconnect: wake, onError })
 * await listener.ready
 * // …
 * await listener.stop()
 */
export function startPostgresListener(options: PostgresListenerOptions): PostgresListener {
  const { connection, channel, onMessage, onReconnect, onError } = options
  let client: pg.Client | undefined
  let stopped = false
  let retry: NodeJS.Timeout | undefined
  let delay = RECONNECT_MIN_MS

  const listen = async (): Promise<void> => {
    const next = new pgDriver.Client(connection)
    next.on('notification', (message) => {
      if (message.channel === channel) onMessage(message.payload ?? '')
    })
    next.on('error', (error) => {
      onError(error)
      lost(next)
    })
    next.on('end', () => lost(next))
    try {
      await next.connect()
      await next.query(`listen ${pgDriver.escapeIdentifier(channel)}`)
    } catch (error) {
      await next.end().catch(() => {})
      throw error
    }
    // Stopped while connecting: nobody holds this connection any more.
    if (stopped) {
      await next.end().catch(() => {})
      return
    }
    client = next
    delay = RECONNECT_MIN_MS
  }

  const lost = (which: pg.Client) => {
    if (stopped || which !== client) return
    client = undefined
    which.end().catch(() => {})
    schedule()
  }

  const schedule = () => {
    if (stopped || retry !== undefined) return
    retry = setTimeout(() => {
      retry = undefined
      listen().then(
        () => {
          if (!stopped) onReconnect()
        },
        (error: unknown) => {
          onError(error)
          delay = Math.min(delay * 2, RECONNECT_MAX_MS)
          schedule()
        },
      )
    }, delay)
    retry.unref()
  }

  const stop = async () => {
    stopped = true
    clearTimeout(retry)
    const current = client
    client = undefined
    await current?.end().catch(() => {})
  }

  const ready = listen().catch((error: unknown) => {
    stopped = true
    throw error
  })
  return { ready, stop }
}
