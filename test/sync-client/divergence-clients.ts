import { createApiClient } from '../../examples/sync-client/client.js'
import { Mirror } from '../../examples/sync-client/mirror.js'
import { RESOURCE_NAMES } from '../../examples/sync-client/resources.js'
import { syncMirror } from '../../examples/sync-client/sync.js'
import { emptyCopy, type CopiedRecord, type CopyName } from './divergence-mini-client.js'
import type { SyncUnderTest } from './divergence-run.js'

/** Small pages, so that every list takes several requests and changes land between them. */
const PER_PAGE = 7
const FEED_LIMIT = 13

/**
 * The client the divergence test runs: the example sync client (examples/sync-client), one
 * `syncMirror` pass per `syncOnce`, into an in-memory mirror, with a key of company 1. With
 * several `baseUrls` each request goes to the next (two app instances behind a round-robin
 * balancer), through the client's own `fetch` option.
 */
export async function clientUnderTest(baseUrls: readonly string[], key: string): Promise<SyncUnderTest> {
  const [home] = baseUrls
  if (home === undefined) throw new TypeError('clientUnderTest needs a base URL')
  let next = 0
  const roundRobin = (request: Request): Promise<Response> => {
    const target = baseUrls[next % baseUrls.length] as string
    next += 1
    // The sync client only reads: a GET carries no body to move across.
    return fetch(target === home ? request : new Request(target + request.url.slice(home.length), request))
  }
  const client = createApiClient({ baseUrl: home, key, fetch: roundRobin })
  const mirror = Mirror.open(':memory:')
  return {
    async syncOnce() {
      await syncMirror(client, mirror, { perPage: PER_PAGE, feedLimit: FEED_LIMIT })
    },
    copy() {
      const copy = emptyCopy()
      for (const name of RESOURCE_NAMES) {
        for (const record of mirror.records(name)) copy[name as CopyName].set(record.id, record as unknown as CopiedRecord)
      }
      return copy
    },
    close: () => mirror.close(),
  }
}
