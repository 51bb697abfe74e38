/**
 * Renders hundredths as an exact decimal string: 1234 → "12.34", -5 → "-0.05".
 * Integer arithmetic only; a float never touches an amount.
 */
export function formatCents(cents: number): string {
  if (!Number.isSafeInteger(cents)) throw new RangeError(`amount_cents must be a safe integer, got ${cents}`)
  const sign = cents < 0 ? '-' : ''
  const digits = String(Math.abs(cents)).padStart(3, '0')
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`
}
