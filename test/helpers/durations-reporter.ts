import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { relative } from 'node:path'
import type { Reporter, TestModule } from 'vitest/node'

const TABLE = 'test/durations.json'

/**
 * Keeps `test/durations.json`: each test file's duration in its last run (seconds), longest
 * first. `vitest.config.ts` starts files in that order in every checkout, CI's fresh clones
 * included (vitest's own record of past durations lives in `node_modules`, which a fresh clone
 * does not have, so it would start files by size). The files of this run replace their entries;
 * the others keep theirs, unless the file is gone. Run by `npm run test:durations`.
 */
export default class DurationsReporter implements Reporter {
  readonly #seconds = new Map<string, number>()

  onTestModuleEnd(module: TestModule): void {
    this.#seconds.set(relative(process.cwd(), module.moduleId), Math.round(module.diagnostic().duration / 100) / 10)
  }

  onTestRunEnd(): void {
    const kept: Record<string, number> = existsSync(TABLE) ? JSON.parse(readFileSync(TABLE, 'utf8')) : {}
    const table = new Map(Object.entries(kept).filter(([file]) => existsSync(file)))
    for (const [file, seconds] of this.#seconds) table.set(file, seconds)
    const longestFirst = [...table].sort(([, a], [, b]) => b - a)
    writeFileSync(TABLE, `${JSON.stringify(Object.fromEntries(longestFirst), null, 2)}\n`)
  }
}
