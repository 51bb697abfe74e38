import { createServer, get, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkDestination, guardedLookup, isPublicAddress, WebhookDestinationError } from '../../src/webhooks/destination.js'

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
    ['not an address', false],
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
})
