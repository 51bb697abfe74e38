import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { generateWebhookSecret, signWebhook, verifyWebhook, WebhookVerificationError } from '../../src/webhooks/signature.js'

const ID = 'evt_0000000000000001'
const BODY = JSON.stringify({ id: ID, type: 'todos.updated', created_at: '2026-11-23T05:00:00.000Z', company_id: 1, data: { id: 7, title: 'Ünïcode ✓' } })

describe('webhook signatures (Standard Webhooks)', () => {
  it('a new secret is whsec_ and the base64 of 32 random bytes, different each time', () => {
    const secret = generateWebhookSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32)
    expect(generateWebhookSecret()).not.toBe(secret)
  })

  it('what we sign, the standardwebhooks library verifies; what it signs, we verify', () => {
    const secret = generateWebhookSecret()
    const now = Math.floor(Date.now() / 1000)
    const headers = signWebhook([secret], ID, now, BODY)
    expect(headers['x-service-signature']).toBe(headers['webhook-signature'])
    expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY))

    const theirs = new Webhook(secret).sign(ID, new Date(now * 1000), BODY)
    expect(verifyWebhook(secret, { 'webhook-id': ID, 'webhook-timestamp': String(now), 'webhook-signature': theirs }, BODY)).toEqual(JSON.parse(BODY))
    expect(headers['webhook-signature']).toBe(theirs)
  })

  it('a byte changed in the body, the id or the timestamp fails verification, with both libraries', () => {
    const secret = generateWebhookSecret()
    const now = Math.floor(Date.now() / 1000)
    const headers = signWebhook([secret], ID, now, BODY)
    const changed = BODY.replace('"id":7', '"id":8')
    expect(() => verifyWebhook(secret, headers, changed)).toThrow(WebhookVerificationError)
    expect(() => new Webhook(secret).verify(changed, headers)).toThrow()
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-id': 'evt_other' }, BODY)).toThrow(/no webhook-signature matches/)
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-timestamp': String(now - 1) }, BODY)).toThrow(/no webhook-signature matches/)
    expect(() => verifyWebhook(generateWebhookSecret(), headers, BODY)).toThrow(/no webhook-signature matches/)
  })

  it('while two secrets are valid (rotation), both signatures are sent and either secret verifies', () => {
    const [old, current] = [generateWebhookSecret(), generateWebhookSecret()]
    const now = Math.floor(Date.now() / 1000)
    const headers = signWebhook([current, old], ID, now, BODY)
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2)
    for (const secret of [old, current]) {
      expect(verifyWebhook(secret, headers, BODY)).toEqual(JSON.parse(BODY))
      expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY))
    }
  })

  it('refuses a timestamp outside the tolerance, and missing or malformed headers', () => {
    const secret = generateWebhookSecret()
    const at = 1_795_000_000
    const headers = signWebhook([secret], ID, at, BODY)
    expect(verifyWebhook(secret, headers, BODY, { now: (at + 300) * 1000 })).toEqual(JSON.parse(BODY))
    expect(() => verifyWebhook(secret, headers, BODY, { now: (at + 301) * 1000 })).toThrow(/outside the tolerance/)
    expect(() => verifyWebhook(secret, headers, BODY, { now: (at - 301) * 1000 })).toThrow(/outside the tolerance/)
    expect(verifyWebhook(secret, headers, BODY, { now: (at + 3_600) * 1000, toleranceSeconds: 3_600 })).toEqual(JSON.parse(BODY))
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      expect(() => verifyWebhook(secret, { ...headers, [name]: undefined }, BODY, { now: at * 1000 })).toThrow(`missing ${name} header`)
    }
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-timestamp': '12.5' }, BODY, { now: at * 1000 })).toThrow(/Unix time/)
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-signature': 'v2,abc v1' }, BODY, { now: at * 1000 })).toThrow(/no webhook-signature matches/)
  })

  it('verifies a raw Buffer body as its UTF-8 text', () => {
    const secret = generateWebhookSecret()
    const now = Math.floor(Date.now() / 1000)
    const headers = signWebhook([secret], ID, now, BODY)
    expect(verifyWebhook(secret, headers, Buffer.from(BODY, 'utf8'))).toEqual(JSON.parse(BODY))
  })
})
