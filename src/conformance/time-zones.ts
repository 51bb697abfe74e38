/**
 * The process time zones the day-sensitive groups run under: one far east of UTC (+14, where a
 * local midnight is the previous UTC day), one west of it (−8/−7, where a UTC midnight is the
 * previous local day) and one with a half-hour offset (+5:30). A bug that the machine's own zone
 * hides — a day read back through a local-midnight `Date`, an instant parsed from text without
 * its `Z` — shows in at least one of them, whatever zone the tests run in.
 */
export const DAY_TIME_ZONES: readonly string[] = ['Pacific/Kiritimati', 'America/Los_Angeles', 'Asia/Kolkata']

const PROBE = Date.UTC(2026, 0, 15, 12, 0, 0)

/** Minutes past midnight of the probe instant as `Date` sees it locally, and as `timeZone` has it. */
function probeMinutes(timeZone: string): { local: number; zone: number } {
  const local = new Date(PROBE)
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, hour: 'numeric', minute: 'numeric', hourCycle: 'h23' }).formatToParts(local)
  const part = (type: string) => Number(parts.find((candidate) => candidate.type === type)?.value)
  return { local: local.getHours() * 60 + local.getMinutes(), zone: part('hour') * 60 + part('minute') }
}

/**
 * Sets the process time zone to `timeZone` (Node applies a change of `process.env.TZ` to every
 * later `Date` computation) and returns the function that restores the previous one. Fails with
 * what to do if the change does not take effect: a vitest worker *thread* (`pool: 'threads'`)
 * cannot change the time zone of the process it shares.
 */
export function useProcessTimeZone(timeZone: string): () => void {
  const previous = process.env.TZ
  const restore = () => {
    if (previous === undefined) delete process.env.TZ
    else process.env.TZ = previous
  }
  process.env.TZ = timeZone
  const { local, zone } = probeMinutes(timeZone)
  if (local !== zone) {
    restore()
    throw new Error(
      `conformance suite: the day-sensitive groups run with the process time zone set to ${timeZone} (and ${DAY_TIME_ZONES.filter((other) => other !== timeZone).join(', ')}), ` +
        `but setting process.env.TZ had no effect in this process: Date still computes local times in ${Intl.DateTimeFormat().resolvedOptions().timeZone}. ` +
        "Worker threads cannot change the time zone: run this test file with vitest's default pool, `pool: 'forks'` (in vitest.config, or a project of its own).",
    )
  }
  return restore
}
