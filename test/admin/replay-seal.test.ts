import { describe, expect, it } from 'vitest'
import { ReplaySeal } from '../../src/admin/replay-seal.js'

describe('ReplaySeal', () => {
  const body = JSON.stringify({ key: 'owk_0123456789abcdef_secret', data: { key_id: '0123456789abcdef' } })

  it('opens what it sealed, and the sealed text holds nothing of the body', () => {
    const sealed = new ReplaySeal('idem-1', 'slot-a').seal(body)
    expect(sealed).not.toContain('secret')
    expect(sealed).not.toContain('0123456789abcdef')
    expect(new ReplaySeal('idem-1', 'slot-a').open(sealed)).toBe(body)
  })

  it('does not open under another Idempotency-Key or slot, nor when changed, nor a plain body', () => {
    const sealed = new ReplaySeal('idem-1', 'slot-a').seal(body)
    expect(() => new ReplaySeal('idem-2', 'slot-a').open(sealed)).toThrow()
    expect(() => new ReplaySeal('idem-1', 'slot-b').open(sealed)).toThrow()
    const parts = sealed.split('.')
    const ciphertext = Buffer.from(parts.at(-1) as string, 'base64url')
    ciphertext[0] = (ciphertext[0] as number) ^ 1
    const changed = [...parts.slice(0, -1), ciphertext.toString('base64url')].join('.')
    expect(() => new ReplaySeal('idem-1', 'slot-a').open(changed)).toThrow()
    expect(() => new ReplaySeal('idem-1', 'slot-a').open(body)).toThrow(/not sealed/)
  })

  it('seals the same body differently each time (a fresh IV)', () => {
    const seal = new ReplaySeal('idem-1', 'slot-a')
    expect(seal.seal(body)).not.toBe(seal.seal(body))
  })
})
