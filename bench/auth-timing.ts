/**
 * Does the time `KeyVerifier.verify` takes tell an unknown key id from a known id with a wrong
 * secret? Samples both, interleaved, against a real SQLite key store, with the cache on (the
 * id's answer cached) and off (every call looks the id up), and compares the distributions
 * with a two-sided Mann-Whitney U test.
 *
 * Usage: npx tsx bench/auth-timing.ts [--samples 20000]
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { KeyVerifier } from '../src/auth/key-verifier.js'
import { KeyManager } from '../src/keys/key-manager.js'
import { systemClock } from '../src/ports/clock.js'

const DEFAULT_SAMPLES = 20_000
const WARMUP = 2_000

interface Summary {
  medianNs: number
  p90Ns: number
}

function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number
  return { medianNs: at(0.5), p90Ns: at(0.9) }
}

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

async function time(run: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint()
  await run()
  return Number(process.hrtime.bigint() - start)
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { samples: { type: 'string' } } })
  const samples = values.samples === undefined ? DEFAULT_SAMPLES : Number(values.samples)
  if (!Number.isInteger(samples) || samples < 100 || samples > 1_000_000) throw new Error('--samples must be an integer from 100 to 1,000,000')
  const dir = mkdtempSync(join(tmpdir(), 'wfa-auth-timing-'))
  const adapter = await openSqliteAdapter({ filename: join(dir, 'keys.db') })
  try {
    const { key } = await new KeyManager(adapter.keyStore, systemClock).create({ companyId: 1, scopes: ['users:read'] })
    const wrongSecret = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0')
    const unknownId = `owk_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('hex')}`
    console.log(`Node ${process.version}; ${samples} samples per case, interleaved, after ${WARMUP} warm-up calls each`)
    console.log('| cache | case | median µs | p90 µs |')
    console.log('|---|---|---:|---:|')
    const verdicts: string[] = []
    for (const [label, verifier] of [
      ['on', new KeyVerifier({ keyStore: adapter.keyStore, clock: systemClock })],
      ['off (ttlMs 0)', new KeyVerifier({ keyStore: adapter.keyStore, clock: systemClock, cacheTtlMs: 0 })],
    ] as const) {
      for (const presented of [wrongSecret, unknownId]) {
        if ((await verifier.verify(presented)) !== null) throw new Error('a wrong key was accepted')
      }
      for (let i = 0; i < WARMUP; i++) {
        await verifier.verify(wrongSecret)
        await verifier.verify(unknownId)
      }
      const known: number[] = []
      const unknown: number[] = []
      for (let i = 0; i < samples; i++) {
        // Alternate which goes first, so neither always runs right after the other.
        if (i % 2 === 0) {
          known.push(await time(() => verifier.verify(wrongSecret)))
          unknown.push(await time(() => verifier.verify(unknownId)))
        } else {
          unknown.push(await time(() => verifier.verify(unknownId)))
          known.push(await time(() => verifier.verify(wrongSecret)))
        }
      }
      for (const [name, values] of [['known id, wrong secret', known], ['unknown id', unknown]] as const) {
        const { medianNs, p90Ns } = summarize(values)
        console.log(`| ${label} | ${name} | ${(medianNs / 1000).toFixed(2)} | ${(p90Ns / 1000).toFixed(2)} |`)
      }
      const test = mannWhitney(known, unknown)
      verdicts.push(`cache ${label}: Mann-Whitney U = ${test.u.toExponential(4)}, z = ${test.z.toFixed(2)}, two-sided p = ${test.p.toPrecision(3)}`)
    }
    for (const verdict of verdicts) console.log(verdict)
  } finally {
    await adapter.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
