import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/**
 * Where webhooks may be delivered. A destination must be `https` and its host must resolve
 * only to public unicast addresses: loopback, private, link-local, unique-local, multicast,
 * unspecified and other special-purpose ranges are refused, at creation and again at connect
 * time (a name may resolve elsewhere by then: DNS rebinding). `allowPrivate` lifts both checks
 * and also allows `http`, for development and tests.
 */
export interface DestinationPolicy {
  allowPrivate: boolean
}

export type DestinationProblem = 'invalid_url' | 'not_https' | 'private_address' | 'unresolvable'

export class WebhookDestinationError extends Error {
  constructor(
    readonly reason: DestinationProblem,
    message: string,
  ) {
    super(message)
    this.name = 'WebhookDestinationError'
  }
}

/** Special-purpose ranges (IANA registries) no delivery may reach unless `allowPrivate`. */
const NOT_PUBLIC = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b::', 96], // NAT64: reaches IPv4, checked below as such
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6')
}

/** Whether `address` (an IPv4 or IPv6 literal) is public unicast. IPv4-mapped IPv6 counts as its IPv4. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
    if (mapped !== null) return isPublicAddress(mapped[1] as string)
    return !NOT_PUBLIC.check(address, 'ipv6')
  }
  return !NOT_PUBLIC.check(address, 'ipv4')
}

type Resolve = (host: string) => Promise<LookupAddress[]>

const resolveAll: Resolve = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))))

/**
 * Checks a destination when an endpoint is created or its URL changed.
 * @returns the parsed URL.
 * @throws WebhookDestinationError naming what is wrong.
 */
export async function checkDestination(url: string, policy: DestinationPolicy, resolve: Resolve = resolveAll): Promise<URL> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new WebhookDestinationError('invalid_url', 'must be an absolute URL')
  }
  const allowed = policy.allowPrivate ? ['https:', 'http:'] : ['https:']
  if (!allowed.includes(parsed.protocol)) {
    throw new WebhookDestinationError(parsed.protocol === 'http:' ? 'not_https' : 'invalid_url', `must be an ${policy.allowPrivate ? 'http or https' : 'https'} URL`)
  }
  if (parsed.username !== '' || parsed.password !== '') throw new WebhookDestinationError('invalid_url', 'must not carry credentials')
  if (policy.allowPrivate) return parsed
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  let addresses: LookupAddress[]
  try {
    addresses = isIP(host) === 0 ? await resolve(host) : [{ address: host, family: isIP(host) }]
  } catch {
    throw new WebhookDestinationError('unresolvable', `host ${host} does not resolve`)
  }
  const refused = addresses.find(({ address }) => !isPublicAddress(address))
  if (addresses.length === 0 || refused !== undefined) {
    throw new WebhookDestinationError('private_address', `host ${host} resolves to a non-public address${refused === undefined ? '' : ` (${refused.address})`}`)
  }
  return parsed
}

/**
 * A `lookup` for the delivery's socket that refuses non-public addresses at connect time, so
 * a name that resolved to a public address at creation cannot be re-pointed inside (DNS
 * rebinding). With `allowPrivate` it is plain `dns.lookup`.
 */
export function guardedLookup(policy: DestinationPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0)
      const list = addresses as LookupAddress[]
      const usable = policy.allowPrivate ? list : list.filter(({ address }) => isPublicAddress(address))
      if (usable.length === 0) {
        return callback(new WebhookDestinationError('private_address', `host ${hostname} resolves to a non-public address`), '', 0)
      }
      if ((options as { all?: boolean }).all === true) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable)
      const first = usable[0] as LookupAddress
      callback(null, first.address, first.family)
    })
  }
}
