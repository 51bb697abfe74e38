/**
 * Preloaded into `workforce-api serve` by bench/pages.ts (`node --import <this> dist/cli.js serve …`)
 * when it profiles: the first SIGUSR2 starts V8's sampling profiler on the main thread, the next
 * stops it and writes `<WFA_BENCH_PROFILE>` (then `<WFA_BENCH_PROFILE>.done`, so the parent knows
 * the file is complete). Only the measured seconds are sampled: start-up, seeding the caches and
 * warm-up stay out, so the profile's time divides cleanly by the requests measured.
 * Plain JavaScript: it runs in front of the built CLI, without tsx.
 */
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'

/** V8's default is 1000 µs; finer for requests of a few hundred µs. */
const INTERVAL_MICROS = 250
const path = process.env.WFA_BENCH_PROFILE
let session
let running = false

process.on('SIGUSR2', () => {
  toggle().catch((error) => {
    console.error(`profile-on-signal: ${error instanceof Error ? error.message : String(error)}`)
  })
})

async function toggle() {
  if (path === undefined) throw new Error('WFA_BENCH_PROFILE is not set')
  if (session === undefined) {
    session = new Session()
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: INTERVAL_MICROS })
  }
  if (!running) {
    running = true
    await session.post('Profiler.start')
    writeFileSync(`${path}.started`, '')
    return
  }
  running = false
  const { profile } = await session.post('Profiler.stop')
  writeFileSync(path, JSON.stringify(profile))
  writeFileSync(`${path}.done`, '')
}
