import { expect } from '../vitest-api.js'
import { it } from '../harness.js'
import type { IdempotencyBeginResult, IdempotencyStore } from '../../ports/idempotency-store.js'
import type { ConformanceGroup } from '../group.js'
import { CREATED_RESPONSE, EMPTY_RESPONSE, LEASE_MS, RETENTION_MS, attempt, responseOf, sha256 } from '../idempotency-requests.js'
import { afterNow } from '../write-facts.js'
import { typed } from './value-fidelity.js'

/** A begin result with the runtime types of the replayed response, so `"201"` never passes for `201`. */
function typedResult(result: IdempotencyBeginResult): unknown {
  if (result.state !== 'replay') return result
  const { status, headers, body } = result.response
  return { state: 'replay', response: { status: typed(status), headers: typed(headers), body: typed(body) } }
}

/** How many of `results` are in each state, e.g. `{ started: 1, in_flight: 29 }`. */
function countStates(results: readonly IdempotencyBeginResult[]): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const result of results) counts[result.state] = (counts[result.state] ?? 0) + 1
  return counts
}

/** Runs `count` identical begins on one slot at once (tokens `race-0`…), all at `WRITE_NOW + atMs`. */
async function race(
  store: IdempotencyStore,
  slot: string,
  fingerprint: string,
  count: number,
  atMs: number,
  overrides: Parameters<typeof attempt>[4] = {},
): Promise<{ states: Record<string, number>; winners: string[] }> {
  const tokens = Array.from({ length: count }, (_, index) => `race-${index}`)
  const results = await Promise.all(tokens.map((token) => store.begin(attempt(slot, fingerprint, token, atMs, overrides))))
  return { states: countStates(results), winners: tokens.filter((_, index) => results[index]?.state === 'started') }
}

/** Which of `tokens` can complete the slot now: only the one holding it. */
async function completers(store: IdempotencyStore, slot: string, tokens: readonly string[], atMs: number): Promise<string[]> {
  const holders: string[] = []
  for (const token of tokens) {
    if (await store.complete(slot, token, responseOf(token), afterNow(atMs))) holders.push(token)
  }
  return holders
}

/** The `IdempotencyStore` port (src/ports/idempotency-store.ts), the durable half of spec 4.4. */
export const idempotencyGroup: ConformanceGroup = {
  title: 'idempotency store',
  requires: ['idempotency'],
  define(ctx) {
    const fingerprint = sha256('POST /v1/todos {"list_id":1,"title":"Call the supplier"}')
    const otherFingerprint = sha256('POST /v1/todos {"list_id":1,"title":"Something else"}')

    it('begin on a free slot starts; complete records the response; a retry replays it exactly (status, headers, body byte for byte)', async () => {
      const store = ctx.idempotency()
      for (const [label, response] of [
        ['a created to-do with a tricky body', CREATED_RESPONSE],
        ['a refusal with no headers and an empty body', EMPTY_RESPONSE],
      ] as const) {
        const slot = sha256(`replay: ${label}`)
        const replay = { state: 'replay', response }
        expect(await store.begin(attempt(slot, fingerprint, 'token-a', 0)), `${label}: begin on a free slot`).toEqual({ state: 'started' })
        expect(await store.complete(slot, 'token-a', response, afterNow(500)), `${label}: complete by the holder`).toBe(true)
        const retry = await store.begin(attempt(slot, fingerprint, 'token-b', 1_000))
        expect(typedResult(retry), `${label}: begin again, lease still live`).toEqual(typedResult(replay as IdempotencyBeginResult))
        expect(retry.state === 'replay' ? retry.response.body : null, `${label}: the replayed body`).toBe(response.body)
        expect(await store.begin(attempt(slot, fingerprint, 'token-c', LEASE_MS + 1_000)), `${label}: begin again, past the lease`).toEqual(replay)
        // A completed record is final: a second completion must not replace the response.
        await store.complete(slot, 'token-a', responseOf('second completion'), afterNow(LEASE_MS + 2_000))
        expect(await store.begin(attempt(slot, fingerprint, 'token-d', LEASE_MS + 3_000)), `${label}: begin after a second complete`).toEqual(replay)
      }
      expect(await store.complete(sha256('replay: no such slot'), 'token-a', CREATED_RESPONSE, afterNow(0)), 'complete of an unknown slot').toBe(false)
    })

    it('slots are independent: a slot in flight does not block another', async () => {
      const store = ctx.idempotency()
      const [one, two] = [sha256('independent: one'), sha256('independent: two')]
      expect(await store.begin(attempt(one, fingerprint, 'token-a', 0)), 'begin on slot one').toEqual({ state: 'started' })
      expect(await store.begin(attempt(two, fingerprint, 'token-b', 1)), 'begin on slot two, same fingerprint').toEqual({ state: 'started' })
      expect(await store.complete(two, 'token-b', CREATED_RESPONSE, afterNow(2)), 'complete slot two').toBe(true)
      expect(await store.begin(attempt(one, fingerprint, 'token-c', 3)), 'begin on slot one again').toEqual({ state: 'in_flight' })
    })

    it('a different request on the slot is a mismatch and leaves the record as it was, in flight or completed', async () => {
      const store = ctx.idempotency()
      const slot = sha256('mismatch')
      expect(await store.begin(attempt(slot, fingerprint, 'token-a', 0)), 'begin on a free slot').toEqual({ state: 'started' })
      expect(await store.begin(attempt(slot, otherFingerprint, 'token-b', 1_000)), 'another request while in flight').toEqual({ state: 'mismatch' })
      expect(await store.begin(attempt(slot, fingerprint, 'token-c', 2_000)), 'the same request after the mismatch').toEqual({ state: 'in_flight' })
      expect(await store.complete(slot, 'token-a', CREATED_RESPONSE, afterNow(3_000)), 'complete by the holder after the mismatch').toBe(true)
      expect(await store.begin(attempt(slot, otherFingerprint, 'token-d', 4_000)), 'another request once completed').toEqual({ state: 'mismatch' })
      expect(await store.begin(attempt(slot, fingerprint, 'token-e', 5_000)), 'the same request after that mismatch').toEqual({
        state: 'replay',
        response: CREATED_RESPONSE,
      })
    })

    it('a live lease blocks the slot to its last millisecond; then a retry takes over and the old token can no longer complete', async () => {
      const store = ctx.idempotency()
      const slot = sha256('lease')
      expect(await store.begin(attempt(slot, fingerprint, 'token-a', 0)), `begin at 0 (lease until ${LEASE_MS} ms)`).toEqual({ state: 'started' })
      expect(await store.begin(attempt(slot, fingerprint, 'token-b', LEASE_MS - 1)), `begin at ${LEASE_MS - 1} ms`).toEqual({ state: 'in_flight' })
      expect(await store.complete(slot, 'token-b', responseOf('token-b'), afterNow(LEASE_MS - 1)), 'complete by the refused token-b').toBe(false)
      expect(await store.begin(attempt(slot, fingerprint, 'token-c', LEASE_MS)), `begin at ${LEASE_MS} ms, the instant the lease ends`).toEqual({
        state: 'started',
      })
      expect(await store.complete(slot, 'token-a', responseOf('token-a'), afterNow(LEASE_MS + 1)), 'complete by token-a, taken over').toBe(false)
      await store.release(slot, 'token-a')
      expect(await store.begin(attempt(slot, fingerprint, 'token-d', LEASE_MS + 2)), "begin after token-a's release: token-c's lease is live").toEqual({
        state: 'in_flight',
      })
      expect(await store.complete(slot, 'token-c', responseOf('token-c'), afterNow(LEASE_MS + 3)), 'complete by token-c, the holder').toBe(true)
      expect(await store.begin(attempt(slot, fingerprint, 'token-e', LEASE_MS + 4)), 'begin after the completion').toEqual({
        state: 'replay',
        response: responseOf('token-c'),
      })
    })

    it('a record created before expiredBefore is replaced as if the slot were free; one created exactly at expiredBefore is kept', async () => {
      const store = ctx.idempotency()
      const slot = sha256('expiry')
      const createdAt = afterNow(0)
      expect(await store.begin(attempt(slot, fingerprint, 'token-a', 0)), 'begin at 0').toEqual({ state: 'started' })
      expect(await store.complete(slot, 'token-a', CREATED_RESPONSE, afterNow(1)), 'complete').toBe(true)
      const keptAt = RETENTION_MS
      expect(
        await store.begin(attempt(slot, fingerprint, 'token-b', keptAt, { expiredBefore: createdAt })),
        'the same request, expiredBefore = the record\'s created instant',
      ).toEqual({ state: 'replay', response: CREATED_RESPONSE })
      expect(
        await store.begin(attempt(slot, otherFingerprint, 'token-b', keptAt, { expiredBefore: createdAt })),
        'another request, expiredBefore = the record\'s created instant',
      ).toEqual({ state: 'mismatch' })
      expect(
        await store.begin(attempt(slot, otherFingerprint, 'token-c', keptAt + 1, { expiredBefore: afterNow(1) })),
        'another request, expiredBefore 1 ms after the record was created',
      ).toEqual({ state: 'started' })
      expect(
        await store.begin(attempt(slot, otherFingerprint, 'token-d', keptAt + 2, { expiredBefore: afterNow(2) })),
        'that request again: the replacement is in flight',
      ).toEqual({ state: 'in_flight' })
      expect(
        await store.begin(attempt(slot, fingerprint, 'token-d', keptAt + 3, { expiredBefore: afterNow(3) })),
        'the first request again: its record is gone',
      ).toEqual({ state: 'mismatch' })
      expect(await store.complete(slot, 'token-a', responseOf('token-a'), afterNow(keptAt + 4)), 'complete by the expired token-a').toBe(false)
      expect(await store.complete(slot, 'token-c', responseOf('token-c'), afterNow(keptAt + 5)), 'complete by token-c').toBe(true)
      expect(await store.begin(attempt(slot, otherFingerprint, 'token-e', keptAt + 6)), 'the replacement request again').toEqual({
        state: 'replay',
        response: responseOf('token-c'),
      })

      // An expired record that was never completed is replaced as well.
      const abandoned = sha256('expiry: abandoned')
      expect(await store.begin(attempt(abandoned, fingerprint, 'token-a', 0)), 'begin on another slot at 0, never completed').toEqual({
        state: 'started',
      })
      expect(
        await store.begin(attempt(abandoned, otherFingerprint, 'token-b', RETENTION_MS + 1)),
        'another request on it after the retention',
      ).toEqual({ state: 'started' })
      expect(await completers(store, abandoned, ['token-a', 'token-b'], RETENTION_MS + 2), 'which tokens can complete it').toEqual(['token-b'])
    })

    it('renew extends the lease only for the token holding the slot, and only while in flight', async () => {
      const store = ctx.idempotency()
      const slot = sha256('renew: heartbeat')
      expect(await store.begin(attempt(slot, fingerprint, 'token-a', 0)), `begin at 0 (lease until ${LEASE_MS} ms)`).toEqual({ state: 'started' })
      const steps = {
        'renew by another token': await store.renew(slot, 'token-b', afterNow(3 * LEASE_MS)),
        'renew of an unknown slot': await store.renew(sha256('renew: no such slot'), 'token-a', afterNow(3 * LEASE_MS)),
        'renew by the holder, to twice the lease': await store.renew(slot, 'token-a', afterNow(2 * LEASE_MS)),
      }
      expect(steps, 'what each renew returned').toEqual({
        'renew by another token': false,
        'renew of an unknown slot': false,
        'renew by the holder, to twice the lease': true,
      })
      expect(await store.begin(attempt(slot, fingerprint, 'token-c', LEASE_MS)), `begin at ${LEASE_MS} ms, after the first lease: renewed`).toEqual({ state: 'in_flight' })
      expect(await store.begin(attempt(slot, fingerprint, 'token-c', 2 * LEASE_MS - 1)), `begin at ${2 * LEASE_MS - 1} ms, the renewed lease's last millisecond`).toEqual({
        state: 'in_flight',
      })
      expect(await store.complete(slot, 'token-a', CREATED_RESPONSE, afterNow(2 * LEASE_MS - 1)), 'complete by the holder').toBe(true)
      expect(await store.renew(slot, 'token-a', afterNow(5 * LEASE_MS)), 'renew of the completed slot').toBe(false)
      expect(await store.begin(attempt(slot, fingerprint, 'token-d', 2 * LEASE_MS)), 'begin after the completion').toEqual({ state: 'replay', response: CREATED_RESPONSE })
    })

    it('release frees the slot only for the token holding it, and only while in flight', async () => {
      const store = ctx.idempotency()
      const slot = sha256('release')
      expect(await store.begin(attempt(slot, fingerprint, 'token-a', 0)), 'begin on a free slot').toEqual({ state: 'started' })
      await store.release(slot, 'token-b')
      expect(await store.begin(attempt(slot, fingerprint, 'token-c', 1_000)), 'begin after a release by another token').toEqual({ state: 'in_flight' })
      await store.release(slot, 'token-a')
      expect(await store.begin(attempt(slot, otherFingerprint, 'token-d', 2_000)), 'another request after the holder released').toEqual({
        state: 'started',
      })
      expect(await store.complete(slot, 'token-a', responseOf('token-a'), afterNow(3_000)), 'complete by the released token-a').toBe(false)
      expect(await store.complete(slot, 'token-d', responseOf('token-d'), afterNow(4_000)), 'complete by token-d').toBe(true)
      await store.release(slot, 'token-d')
      expect(await store.begin(attempt(slot, otherFingerprint, 'token-e', 5_000)), 'begin after the completer tried to release').toEqual({
        state: 'replay',
        response: responseOf('token-d'),
      })
      await expect(store.release(sha256('release: no such slot'), 'token-a'), 'release of an unknown slot').resolves.toBeUndefined()
    })

    it('purgeExpired deletes at most limit records, only those created before the instant, in flight or completed', async () => {
      const store = ctx.idempotency()
      const cutoff = afterNow(0)
      // Created at cutoff - 3, - 2, - 1 (expired), at the cutoff and after it (kept).
      const records = [
        { label: 'created 3 ms before, completed', slot: sha256('purge: -3'), atMs: -3, complete: true },
        { label: 'created 2 ms before, in flight', slot: sha256('purge: -2'), atMs: -2, complete: false },
        { label: 'created 1 ms before, completed', slot: sha256('purge: -1'), atMs: -1, complete: true },
        { label: 'created at the cutoff, completed', slot: sha256('purge: 0'), atMs: 0, complete: true },
        { label: 'created 1 ms after, in flight', slot: sha256('purge: +1'), atMs: 1, complete: false },
      ]
      for (const record of [...records].reverse()) {
        await store.begin(attempt(record.slot, fingerprint, 'token-a', record.atMs))
        if (record.complete) await store.complete(record.slot, 'token-a', responseOf(record.label), afterNow(record.atMs))
      }
      const deleted: number[] = []
      for (const limit of [0, 2, 2, 2]) deleted.push(await store.purgeExpired(cutoff, limit))
      expect(deleted, 'purgeExpired(cutoff, limit) with limits 0, 2, 2, 2 over 3 expired records').toEqual([0, 2, 1, 0])
      // What is left: probe each slot with its own request, while every lease is still live.
      const probes: string[] = []
      for (const record of records) {
        const result = await store.begin(attempt(record.slot, fingerprint, 'token-probe', 10))
        probes.push(`${record.label}: ${result.state}`)
      }
      expect(probes, 'begin on each slot after the purges').toEqual([
        'created 3 ms before, completed: started',
        'created 2 ms before, in flight: started',
        'created 1 ms before, completed: started',
        'created at the cutoff, completed: replay',
        'created 1 ms after, in flight: in_flight',
      ])
    })

    it('of 30 concurrent identical begins on a free slot exactly one starts, and only its token can complete', async () => {
      const store = ctx.idempotency()
      const slot = sha256('race: free')
      const { states, winners } = await race(store, slot, fingerprint, 30, 0)
      expect(states, '30 concurrent begins on a free slot').toEqual({ started: 1, in_flight: 29 })
      const tokens = Array.from({ length: 30 }, (_, index) => `race-${index}`)
      expect(await completers(store, slot, tokens, 1_000), 'the tokens that can complete the slot').toEqual(winners)
    })

    it('of 30 concurrent begins on a slot whose lease ran out exactly one takes it over', async () => {
      const store = ctx.idempotency()
      const slot = sha256('race: lease')
      expect(await store.begin(attempt(slot, fingerprint, 'token-crashed', 0)), 'begin by an attempt that never finishes').toEqual({ state: 'started' })
      const { states, winners } = await race(store, slot, fingerprint, 30, LEASE_MS)
      expect(states, '30 concurrent begins when the lease has run out').toEqual({ started: 1, in_flight: 29 })
      const tokens = ['token-crashed', ...Array.from({ length: 30 }, (_, index) => `race-${index}`)]
      expect(await completers(store, slot, tokens, LEASE_MS + 1), 'the tokens that can complete the slot').toEqual(winners)
    })

    it('of 30 concurrent begins on an expired completed slot exactly one replaces it', async () => {
      const store = ctx.idempotency()
      const slot = sha256('race: expired')
      expect(await store.begin(attempt(slot, fingerprint, 'token-old', 0)), 'begin at 0').toEqual({ state: 'started' })
      expect(await store.complete(slot, 'token-old', CREATED_RESPONSE, afterNow(1)), 'complete at 1 ms').toBe(true)
      const { states, winners } = await race(store, slot, fingerprint, 30, RETENTION_MS + 1)
      expect(states, '30 concurrent begins once the record has expired').toEqual({ started: 1, in_flight: 29 })
      const tokens = Array.from({ length: 30 }, (_, index) => `race-${index}`)
      expect(await completers(store, slot, tokens, RETENTION_MS + 2), 'the tokens that can complete the slot').toEqual(winners)
    })
  },
}
