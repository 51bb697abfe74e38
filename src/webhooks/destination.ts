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

/**
 * IPv4 special-purpose ranges (IANA's IPv4 Special-Purpose Address Registry and the
 * multicast/reserved blocks) no delivery may reach unless `allowPrivate`.
 */
const IPV4_NOT_PUBLIC = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata endpoints
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const

/**
 * The two IPv6 forms that stand for an IPv4 address a host may legitimately be given for a
 * public server: IPv4-mapped (`::ffff:a.b.c.d`, how dual-stack sockets and some resolvers
 * write IPv4) and the NAT64 well-known prefix (`64:ff9b::a.b.c.d`, what DNS64 answers on an
 * IPv6-only network). They are judged by the IPv4 address they embed, so each IPv4 range
 * above is refused in both of these forms too.
 */
const IPV4_EMBEDDING_PREFIXES = ['::ffff:0.0.0.0', '64:ff9b::0.0.0.0'] as const

/**
 * IPv6 is public only inside global unicast (`2000::/3`) or one of the embedding prefixes
 * above. That alone refuses `::/128`, `::1`, IPv4-compatible `::/96` (`[::127.0.0.1]`),
 * IPv4-translated `::ffff:0:0:0/96` (`[::ffff:0:7f00:1]`), local-use NAT64 `64:ff9b:1::/48`,
 * discard `100::/64`, unique-local `fc00::/7`, link-local `fe80::/10`, site-local `fec0::/10`,
 * SRv6 `5f00::/16` and multicast `ff00::/8`.
 */
const IPV6_GLOBAL_UNICAST = ['2000::', 3] as const

/** Special-purpose ranges inside global unicast (IANA's IPv6 Special-Purpose Address Registry). */
const IPV6_NOT_PUBLIC = [
  // IETF protocol assignments: Teredo 2001::/32 (embeds an obfuscated IPv4), benchmarking
  // 2001:2::/48, ORCHID, AMT, the PCP/TURN anycasts. No webhook receiver lives here.
  ['2001::', 23],
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4: 2002:AABB:CCDD:: embeds IPv4 AA.BB.CC.DD ([2002:7f00:1::] is loopback)
  ['3fff::', 20], // documentation (RFC 9637)
] as const

const EMBEDS_IPV4 = new BlockList()
for (const prefix of IPV4_EMBEDDING_PREFIXES) EMBEDS_IPV4.addSubnet(prefix, 96, 'ipv6')

const GLOBAL_UNICAST = new BlockList()
GLOBAL_UNICAST.addSubnet(IPV6_GLOBAL_UNICAST[0], IPV6_GLOBAL_UNICAST[1], 'ipv6')

const NOT_PUBLIC = new BlockList()
for (const [network, prefix] of IPV4_NOT_PUBLIC) {
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4')
  // The same range as embedded in IPv6; spelled out rather than relying on BlockList's own
  // IPv4-mapped matching, which not every supported Node line has.
  for (const embedding of IPV4_EMBEDDING_PREFIXES) NOT_PUBLIC.addSubnet(embedding.replace('0.0.0.0', network), 96 + prefix, 'ipv6')
}
for (const [network, prefix] of IPV6_NOT_PUBLIC) NOT_PUBLIC.addSubnet(network, prefix, 'ipv6')

/**
 * Whether `address` (an IPv4 or IPv6 literal) is public unicast: the only addresses a
 * delivery may reach without `allowPrivate`. An IPv6 address that embeds an IPv4 one counts
 * as that IPv4 address (IPv4-mapped, NAT64) or is refused outright (IPv4-compatible,
 * IPv4-translated, local-use NAT64, 6to4, Teredo). An address with a zone (`fe80::1%eth0`)
 * is link-local by definition and refused.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  if (family === 4) return !NOT_PUBLIC.check(address, 'ipv4')
  if (address.includes('%')) return false
  const inPublicSpace = EMBEDS_IPV4.check(address, 'ipv6') || GLOBAL_UNICAST.check(address, 'ipv6')
  return inPublicSpace && !NOT_PUBLIC.check(address, 'ipv6')
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
