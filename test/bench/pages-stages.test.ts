import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { money } from '../../bench/pages-routes.js'
import { stageOf, stageTimes } from '../../bench/pages-stages.js'

let dir: string | undefined
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

/**
 * A bundle as tsup writes it (module markers, no source maps) under node_modules/.cache, and a
 * profile whose frames point into it: each sample's time must land in its module's stage.
 */
function fixture(): { profile: string; root: string } {
  dir = mkdtempSync(join(tmpdir(), 'wfa-pages-stages-'))
  const bundleDir = join(dir, 'node_modules', '.cache', 'wfa-pages-dist-1')
  mkdirSync(bundleDir, { recursive: true })
  const bundle = join(bundleDir, 'chunk-A.js')
  writeFileSync(
    bundle,
    [
      '// src/corridor/authenticate.ts', // line 0
      'function authenticate() {}', // 1
      '// src/api/wire.ts', // 2
      'function timestamp() {}', // 3
      '// adapters/sqlite/sqlite-database.ts', // 4
      'function all() {}', // 5
    ].join('\n'),
  )
  const url = `file://${bundle}`
  const frame = (id: number, functionName: string, frameUrl: string, lineNumber: number, children: number[] = []) => ({
    id,
    callFrame: { functionName, url: frameUrl, lineNumber },
    children,
  })
  const profile = {
    nodes: [
      frame(1, '(root)', '', -1, [2, 9, 10, 11]),
      frame(2, 'handle', `file://${dir}/node_modules/fastify/lib/route.js`, 10, [3, 4, 6]),
      frame(3, 'authenticate', url, 1),
      frame(4, 'timestamp', url, 3, [5]),
      frame(5, 'toISOString', '', -1),
      frame(6, 'all', url, 5, [7]),
      frame(7, 'postMessage', 'node:internal/worker', 0, [8]),
      frame(8, 'structuredClone', '', -1),
      frame(9, 'anonymous3', '', 0),
      frame(10, '(garbage collector)', '', -1),
      frame(11, 'onStreamRead', 'node:internal/stream_base_commons', 0),
    ],
    // timeDeltas[i + 1] is the time sample i stands for.
    samples: [3, 5, 8, 9, 10, 11, 2],
    timeDeltas: [0, 10, 20, 30, 40, 50, 60, 70],
  }
  const path = join(dir, 'serve.cpuprofile')
  writeFileSync(path, JSON.stringify(profile))
  return { profile: path, root: '/work/main' }
}

describe('bench/pages-stages: CPU profile of the bundled CLI by corridor stage', () => {
  it('attributes frames to the module whose marker precedes them, builtins and Node APIs to their caller', () => {
    const { profile, root } = fixture()
    const times = stageTimes(profile, root)
    expect(Object.fromEntries(times.byStage)).toEqual({
      authenticate: 10,
      // toISOString, called by wire.ts
      rendering: 20,
      // postMessage (node:) and the clone under it, called by sqlite-database.ts
      query: 30,
      serialization: 40,
      'garbage collector': 50,
      // Only Node on the stack: reading a socket from the event loop.
      'Node HTTP, sockets, timers': 60,
      'Fastify (routing, hooks, reply)': 70,
    })
    expect(times.busyMicros).toBe(280)
    expect(times.bySource.get('adapters/sqlite/sqlite-database.ts (via builtins)')).toBe(30)
  })

  it('maps sources to stages, first match first', () => {
    expect(stageOf('src/api/list-pages.ts')).toBe('query')
    expect(stageOf('src/api/users/schema.ts')).toBe('rendering')
    expect(stageOf('src/api/read-routes.ts')).toBe('handler')
    expect(stageOf('node_modules/@fastify/rate-limit')).toBe('rate limit')
    expect(stageOf('node_modules/@fastify/error')).toBe('Fastify (routing, hooks, reply)')
    expect(stageOf('src/usage/usage-meter.ts')).toBe('usage meter')
    expect(stageOf('node_modules/pino')).toBe('request log (pino)')
    expect(stageOf('(compiled validator)')).toBe('validation')
  })
})

describe('bench/pages-routes: the baseline renders money as the spec does', () => {
  it('formats cents with two digits and a sign', () => {
    expect([money(0), money(5), money(1230), money(-5), money(-123456)]).toEqual(['0.00', '0.05', '12.30', '-0.05', '-1234.56'])
  })
})
