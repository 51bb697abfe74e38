/**
 * Does the time `KeyVerifier.verify` takes tell an unknown key id from a known id with a wrong
 * secret? Samples both, interleaved, against a real SQLite key store, with the cache on (the
 * id's answer cached) and off (every call looks the id up), and compares the distributions
 * with a two-sided Mann-Whitney U test.
 *
 * Then the same two cases through the plugin (`app.inject`, local counters) from an address past
 * its failed-authentication budget and lookup allowance (issue 21): the known id is cached and
 * vouched for, the unknown id is refused without a lookup, both answer the same 429.
 *
 * Usage: npx tsx bench/auth-timing.ts [--samples 20000]
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'
import { openSqliteAdapter } from '../adapters/sqlite/index.js'
import { KeyVerifier } from '../src/auth/key-verifier.js'
import { KeyManager } from '../src/keys/key-manager.js'
import { workforceApi } from '../src/plugin.js'
import { systemClock } from '../src/ports/clock.js'
import { mannWhitney } from './mann-whitney.js'

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
    verdicts.push(await gatedAddress(adapter, samples))
    for (const verdict of verdicts) console.log(verdict)
  } finally {
    await adapter.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Known id (cached, vouched for) with a wrong secret versus an unknown id (refused unlooked),
 * both from a gated address, timed through the whole plugin. Prints its rows; returns its verdict.
 */
async function gatedAddress(adapter: Awaited<ReturnType<typeof openSqliteAdapter>>, samples: number): Promise<string> {
  const app = Fastify({ logger: false })
  const { storage, keyStore, modules } = adapter
  // One failure spends the address and one unknown id its allowance, for a day: the run stays gated.
  await app.register(workforceApi, { prefix: '/api', storage, keyStore, modules, rateLimit: { max: 1_000_000_000, failedAuth: { max: 1, lookups: 1, timeWindow: 86_400_000 } } })
  try {
    const { key } = await app.workforceApi.keys.create({ companyId: 1, scopes: ['all'] })
    const get = async (presented: string) => app.inject({ method: 'GET', url: '/api/v1/users', headers: { 'x-api-key': presented } })
    const known = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0')
    const unknownId = `owk_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('hex')}`
    if ((await get(key)).statusCode === 401) throw new Error('the benchmark key was refused')
    if ((await get('owk_nope')).statusCode !== 401) throw new Error('the address was not counted')
    if ((await get(`owk_${randomBytes(8).toString('hex')}_${randomBytes(32).toString('hex')}`)).statusCode !== 429) throw new Error('the address is not gated')
    const seconds = (body: string) => body.replace(/\d+ s"/, ' s"')
    const [first, second] = [await get(known), await get(unknownId)]
    if (first.statusCode !== 429 || second.statusCode !== 429 || seconds(first.body) !== seconds(second.body)) throw new Error('the two refusals differ')
    for (let i = 0; i < WARMUP; i++) {
      await get(known)
      await get(unknownId)
    }
    const knownTimes: number[] = []
    const unknownTimes: number[] = []
    for (let i = 0; i < samples; i++) {
      if (i % 2 === 0) {
        knownTimes.push(await time(() => get(known)))
        unknownTimes.push(await time(() => get(unknownId)))
      } else {
        unknownTimes.push(await time(() => get(unknownId)))
        knownTimes.push(await time(() => get(known)))
      }
    }
    for (const [name, values] of [['known id, wrong secret', knownTimes], ['unknown id', unknownTimes]] as const) {
      const { medianNs, p90Ns } = summarize(values)
      console.log(`| gated address, through the plugin | ${name} | ${(medianNs / 1000).toFixed(2)} | ${(p90Ns / 1000).toFixed(2)} |`)
    }
    const test = mannWhitney(knownTimes, unknownTimes)
    return `gated address: Mann-Whitney U = ${test.u.toExponential(4)}, z = ${test.z.toFixed(2)}, two-sided p = ${test.p.toPrecision(3)}`
  } finally {
    await app.close()
  }
}

await main()
