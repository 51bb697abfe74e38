import { describe, expect, it } from 'vitest'
import { formatCents } from '../../src/money.js'

describe('formatCents', () => {
  it.each([
    [0, '0.00'],
    [1, '0.01'],
    [5, '0.05'],
    [10, '0.10'],
    [99, '0.99'],
    [100, '1.00'],
    [101, '1.01'],
    [1234, '12.34'],
    [100000, '1000.00'],
    [250050, '2500.50'],
    [-5, '-0.05'],
    [-100, '-1.00'],
    [-1234, '-12.34'],
    [Number.MAX_SAFE_INTEGER, '90071992547409.91'],
    [-Number.MAX_SAFE_INTEGER, '-90071992547409.91'],
  ])('%i cents is "%s"', (cents, text) => {
    expect(formatCents(cents)).toBe(text)
  })

  it('is exact where float arithmetic is not', () => {
    // 0.29 * 100 is 28.999999999999996 in floating point; hundredths stay exact.
    expect(formatCents(29)).toBe('0.29')
    expect(formatCents(1_000_000_000_001)).toBe('10000000000.01')
  })

  it.each([1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1])('refuses %s', (cents) => {
    expect(() => formatCents(cents)).toThrow(RangeError)
  })
})
