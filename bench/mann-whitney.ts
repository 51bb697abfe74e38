// The statistic the timing checks share: bench/auth-timing.ts (key ids) and the email-existence
// timing test (issue 21). Its own module, so a test can import it without running a benchmark.

/**
 * Two-sided Mann-Whitney U test, normal approximation with tie correction (samples are in the
 * tens of thousands, far past where the exact distribution matters). Written here rather than
 * taken from a package: it is twenty lines of a textbook formula, used by a benchmark only.
 */
export function mannWhitney(a: readonly number[], b: readonly number[]): { u: number; z: number; p: number } {
  const all = [...a.map((value) => ({ value, fromA: true })), ...b.map((value) => ({ value, fromA: false }))].sort((x, y) => x.value - y.value)
  let rankSumA = 0
  let tieTerm = 0
  for (let i = 0; i < all.length; ) {
    let j = i
    while (j < all.length && all[j]?.value === all[i]?.value) j++
    const averageRank = (i + 1 + j) / 2
    for (let k = i; k < j; k++) if (all[k]?.fromA) rankSumA += averageRank
    const ties = j - i
    tieTerm += ties ** 3 - ties
    i = j
  }
  const n1 = a.length
  const n2 = b.length
  const n = n1 + n2
  const u = rankSumA - (n1 * (n1 + 1)) / 2
  const mean = (n1 * n2) / 2
  const sd = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))))
  const z = sd === 0 ? 0 : (u - mean) / sd
  return { u, z, p: 2 * (1 - normalCdf(Math.abs(z))) }
}

/** Standard normal CDF (Abramowitz–Stegun 7.1.26 through erf), accurate to ~1e-7. */
function normalCdf(x: number): number {
  const t = 1 / (1 + 0.3275911 * (x / Math.SQRT2))
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
  return 0.5 * (1 + (1 - poly * Math.exp(-(x * x) / 2)))
}

