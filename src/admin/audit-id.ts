import { randomBytes } from 'node:crypto'

/** Base32 digits in ASCII order, so that ids compare as strings the way their numbers do. */
const ORDERED = '234567abcdefghijklmnopqrstuvwxyz'
let last = { ms: -1, sequence: 0 }

function encode(value: number, length: number): string {
  let out = ''
  for (let i = 0; i < length; i += 1) {
    out = ORDERED[value % 32] + out
    value = Math.floor(value / 32)
  }
  return out
}

/**
 * `aud_` + 24 characters that sort like creation order: the millisecond (10 characters), a
 * sequence within it (4), then 50 random bits (10). Entries of one instance in one millisecond
 * keep their order, so "newest first" is exact for them; across instances, the millisecond.
 */
export function auditId(nowMs: number): string {
  const ms = Math.max(0, Math.floor(nowMs))
  last = ms === last.ms ? { ms, sequence: last.sequence + 1 } : { ms: Math.max(ms, last.ms), sequence: ms < last.ms ? last.sequence + 1 : 0 }
  const random = randomBytes(7).readUIntBE(0, 6) % 32 ** 10
  return `aud_${encode(last.ms, 10)}${encode(last.sequence % 32 ** 4, 4)}${encode(random, 10)}`
}
