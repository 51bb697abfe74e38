import { createServer, get, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { checkDestination, guardedLookup, isPublicAddress, WebhookDestinationError } from '../../src/webhooks/destination.js'
import { buildAdminApp, memoryFactory, SECRET_KEY, type AdminTestApp } from '../admin/admin-app.js'

const strict = { allowPrivate: false }
const open = { allowPrivate: true }

/** A resolver the test controls: no network, and a name that "resolves" wherever the test says. */
const resolver = (table: Record<string, string[]>) => async (host: string) => {
  const addresses = table[host]
  if (addresses === undefined) throw new Error(`ENOTFOUND ${host}`)
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
}

async function reason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'accepted'
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookDestinationError)
    return (error as WebhookDestinationError).reason
  }
}

/** Issue 21 item 8: IPv6 forms that embed 127.0.0.1 and passed the check. */
const ISSUE_ADDRESSES = ['::127.0.0.1', '::ffff:0:7f00:1', '2002:7f00:1::'] as const

/** Every IPv6 form that embeds an IPv4 address: judged by the IPv4 (mapped, NAT64 well-known) or refused whole. */
const EMBEDDED_IPV4_CASES = [
  ['::127.0.0.1', false], // ::/96 IPv4-compatible (deprecated): refused whole
  ['::8.8.8.8', false],
  ['::ffff:0:7f00:1', false], // ::ffff:0:0:0/96 IPv4-translated (SIIT): refused whole
  ['::ffff:0:808:808', false],
  ['::ffff:7f00:1', false], // ::ffff:0:0/96 IPv4-mapped, hex spelling: judged as 127.0.0.1
  ['::ffff:10.0.0.1', false],
  ['::ffff:169.254.169.254', false],
  ['::ffff:100.64.0.1', false],
  ['::ffff:808:808', true], // … as 8.8.8.8
  ['64:ff9b::7f00:1', false], // 64:ff9b::/96 NAT64 well-known prefix: judged as the IPv4
  ['64:ff9b::10.0.0.1', false],
  ['64:ff9b::169.254.169.254', false],
  ['64:ff9b::808:808', true],
  ['64:ff9b:1::7f00:1', false], // 64:ff9b:1::/48 local-use NAT64: refused whole
  ['64:ff9b:1::808:808', false],
  ['2002:7f00:1::', false], // 2002::/16 6to4: refused whole
  ['2002:808:808::1', false],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false], // 2001::/32 Teredo: refused whole
  ['2001::1', false],
] as const

/** The other special-purpose ranges, one address each. */
const SPECIAL_PURPOSE_CASES = [
  ['0.1.2.3', false], // "this network"
  ['127.255.255.254', false],
  ['169.254.0.1', false],
  ['100.127.255.255', false], // CGNAT
  ['192.0.0.8', false], // IETF protocol assignments
  ['192.0.2.1', false], // documentation
  ['192.88.99.1', false], // 6to4 relay anycast
  ['198.18.0.1', false], // benchmarking
  ['198.19.255.255', false],
  ['198.51.100.1', false], // documentation
  ['203.0.113.1', false], // documentation
  ['239.255.255.250', false], // multicast
  ['240.0.0.1', false], // reserved
  ['::1', false], // loopback
  ['::', false], // unspecified
  ['fe80::1%eth0', false], // link-local with a zone
  ['febf::1', false], // link-local
  ['fec0::1', false], // site-local (deprecated)
  ['fc00::1', false], // unique-local
  ['fdff:ffff::1', false],
  ['ff02::1', false], // multicast
  ['100::1', false], // discard
  ['5f00::1', false], // SRv6 SIDs: outside global unicast
  ['2001:2::1', false], // benchmarking
  ['2001:10::1', false], // ORCHID
  ['2001:db8::1', false], // documentation
  ['3fff::1', false], // documentation
  ['4000::1', false], // outside global unicast
] as const

describe('webhook destinations: no deliveries to private networks (SSRF)', () => {
  it.each([
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.16.0.1', false],
    ['172.31.255.255', false],
    ['172.32.0.1', true],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['::', false],
    ['fe80::1', false],
    ['fd00::1', false],
    ['ff02::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:8.8.8.8', true],
    ['8.8.8.8', true],
    ['2606:4700:4700::1111', true],
    ['2001:4860:4860::8888', true],
    ['not an address', false],
    ...EMBEDDED_IPV4_CASES,
    ...SPECIAL_PURPOSE_CASES,
  ] as const)('%s is public: %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected)
  })

  it('refuses at creation: not https, not a URL, credentials, a name that resolves inside, an IP literal inside', async () => {
    const resolve = resolver({ 'hooks.example.com': ['93.184.216.34'], 'rebind.example.com': ['93.184.216.34', '10.0.0.7'], 'inside.example.com': ['192.168.0.9'] })
    expect((await checkDestination('https://hooks.example.com/in', strict, resolve)).hostname).toBe('hooks.example.com')
    expect(await reason(checkDestination('http://hooks.example.com/in', strict, resolve))).toBe('not_https')
    expect(await reason(checkDestination('ftp://hooks.example.com/in', strict, resolve))).toBe('invalid_url')
    expect(await reason(checkDestination('not a url', strict, resolve))).toBe('invalid_url')
    expect(await reason(checkDestination('https://user:pw@hooks.example.com/', strict, resolve))).toBe('invalid_url')
    expect(await reason(checkDestination('https://inside.example.com/', strict, resolve))).toBe('private_address')
    expect(await reason(checkDestination('https://rebind.example.com/', strict, resolve))).toBe('private_address')
    expect(await reason(checkDestination('https://127.0.0.1:8443/', strict, resolve))).toBe('private_address')
    expect(await reason(checkDestination('https://[::1]/', strict, resolve))).toBe('private_address')
    expect(await reason(checkDestination('https://nowhere.example.com/', strict, resolve))).toBe('unresolvable')
  })

  it('localhost (resolved by the system, no network) is refused; allowPrivate accepts it, and http too', async () => {
    expect(await reason(checkDestination('https://localhost:9/', strict))).toBe('private_address')
    expect((await checkDestination('http://localhost:9/', open)).port).toBe('9')
  })

  describe('at connect time (DNS rebinding)', () => {
    let server: Server
    let port: number
    beforeAll(async () => {
      server = createServer((_request, response) => response.end('ok'))
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      port = (server.address() as AddressInfo).port
    })
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

    const fetchThrough = (policy: { allowPrivate: boolean }) =>
      new Promise<string>((resolve, reject) => {
        get({ host: 'localhost', port, path: '/', lookup: guardedLookup(policy), family: 4 }, (response) => {
          let body = ''
          response.on('data', (chunk: Buffer) => (body += chunk.toString()))
          response.on('end', () => resolve(body))
        }).on('error', reject)
      })

    it('a socket whose name resolves to loopback is refused before it connects', async () => {
      await expect(fetchThrough(strict)).rejects.toThrow(WebhookDestinationError)
    })

    it('with allowPrivate the same delivery connects', async () => {
      expect(await fetchThrough(open)).toBe('ok')
    })
  })

  describe('IPv6 forms that embed a private IPv4 address (issue 21 item 8)', () => {
    const refusedLiterals = [...EMBEDDED_IPV4_CASES, ...SPECIAL_PURPOSE_CASES].filter(([address, expected]) => !expected && !address.includes('%'))

    it.each(refusedLiterals)('https://%s is refused at creation', async (address) => {
      const host = address.includes(':') ? `[${address}]` : address
      expect(await reason(checkDestination(`https://${host}/hooks`, strict, resolver({})))).toBe('private_address')
    })

    it.each(ISSUE_ADDRESSES)('a name resolving to %s is refused at creation', async (address) => {
      expect(await reason(checkDestination('https://rebound.example.com/', strict, resolver({ 'rebound.example.com': [address] })))).toBe('private_address')
    })

    const lookupOutcome = (hostname: string) =>
      new Promise<string>((resolve) => {
        guardedLookup(strict)(hostname, {}, (error, address) => resolve(error === null ? `connects to ${address}` : (error as WebhookDestinationError).reason))
      })

    it.each(refusedLiterals.filter(([address]) => address.includes(':')))('the connect-time lookup refuses %s', async (address) => {
      expect(await lookupOutcome(address)).toBe('private_address')
    })

    it('the connect-time lookup still lets a public IPv6 address through', async () => {
      expect(await lookupOutcome('2606:4700:4700::1111')).toBe('connects to 2606:4700:4700::1111')
    })
  })

  describe('through the admin API, on create and on update', () => {
    let t: AdminTestApp
    let close: () => Promise<void>
    for (const transport of ['inject', 'http'] as const) {
      describe(transport === 'http' ? 'real HTTP' : 'app.inject', () => {
        beforeEach(async () => {
          const { adapter } = await memoryFactory().open()
          t = await buildAdminApp(adapter, { transport, api: { webhookOptions: { secretKey: SECRET_KEY, allowPrivateDestinations: false, dispatcher: false } } })
          close = async () => {
            await t.close()
            await adapter.close()
          }
        })
        afterEach(() => close())

        const PUBLIC_URL = 'https://93.184.215.14/hooks'
        const refusals = [...ISSUE_ADDRESSES, '64:ff9b::7f00:1', '64:ff9b:1::a00:1', '2001::7f00:1', '::ffff:7f00:1', 'fec0::1']

        it.each(refusals)('refuses https://[%s]/ with a 422 on create and on update, and stores nothing', async (address) => {
          const url = `https://[${address}]/hooks`
          const created = await t.admin('POST', '/webhooks/endpoints', { url, events: ['users.created'] })
          expect(created.statusCode, created.body).toBe(422)
          expect((created.json() as { error: unknown }).error).toMatchObject({ code: 'validation_error', status: 422 })
          expect(created.body).toMatch(/non-public address/)

          const ok = await t.admin('POST', '/webhooks/endpoints', { url: PUBLIC_URL, events: ['users.created'] })
          expect(ok.statusCode, ok.body).toBe(201)
          const { id } = (ok.json() as { data: { id: string } }).data
          const updated = await t.admin('PATCH', `/webhooks/endpoints/${id}`, { url })
          expect(updated.statusCode, updated.body).toBe(422)
          expect((updated.json() as { error: unknown }).error).toMatchObject({ code: 'validation_error', status: 422 })
          expect(updated.body).toMatch(/non-public address/)

          const listed = await t.admin('GET', '/webhooks/endpoints')
          expect((listed.json() as { data: Array<{ url: string }> }).data.map((endpoint) => endpoint.url)).toEqual([PUBLIC_URL])
        })
      })
    }
  })
})
