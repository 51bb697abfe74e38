import { createContext, type ConformanceContext } from './context.js'
import { conformanceFixture, loadableCopy } from './fixture.js'
import type { ConformanceGroup } from './group.js'
import { CONFORMANCE_GROUPS } from './groups/index.js'
import { collectTests, type CollectedTest } from './harness.js'
import { checkConformanceOptions, resolveSupports, type ConformanceOptions, type ConformanceSubject } from './subject.js'
import { DAY_TIME_ZONES, useProcessTimeZone } from './time-zones.js'

/** One `describe` block of the suite: a group, in one process time zone for a day-sensitive group. */
export interface PlannedGroup {
  group: ConformanceGroup
  /** The group's title, with ` (TZ=…)` for a day-sensitive group. */
  title: string
  /** The process time zone the group's tests run in; `undefined`: the process's own. */
  timeZone: string | undefined
  tests: CollectedTest[]
}

/**
 * The whole suite for one adapter, collected but not run: what `describeStorageConformance`
 * registers with vitest and `runConformance` runs directly. Around every test, `open` creates a
 * fresh subject (in the group's time zone) and loads the fixture; `close` closes it.
 */
export interface ConformancePlan {
  context: ConformanceContext
  groups: PlannedGroup[]
  /**
   * Sets the process time zone (if given), creates the subject and loads the fixture. Resolves
   * to the function that closes this subject and restores the time zone; `close` does the same
   * for the subject opened last.
   */
  open(timeZone: string | undefined): Promise<() => Promise<void>>
  /** Closes the current subject and restores the process time zone. Safe to call after a failed `open`, and twice. */
  close(): Promise<void>
}

export function planConformance(options: ConformanceOptions, groups: readonly ConformanceGroup[] = CONFORMANCE_GROUPS): ConformancePlan {
  checkConformanceOptions(options)
  const supports = resolveSupports(options.supports)
  const { dataset, edges } = conformanceFixture()
  let current: ConformanceSubject | undefined
  const context = createContext({ name: options.name, fixture: dataset, edges, supports, current: () => current })

  const planned: PlannedGroup[] = []
  for (const group of groups) {
    if (!group.requires.every((capability) => supports[capability])) continue
    for (const timeZone of group.timeZoneSensitive === true ? DAY_TIME_ZONES : [undefined]) {
      planned.push({
        group,
        title: timeZone === undefined ? group.title : `${group.title} (TZ=${timeZone})`,
        timeZone,
        tests: collectTests(() => group.define(context)),
      })
    }
  }

  let closeCurrent: (() => Promise<void>) | undefined
  return {
    context,
    groups: planned,
    async open(timeZone) {
      let subject: ConformanceSubject | undefined
      let restoreTimeZone: (() => void) | undefined
      let closed = false
      const close = async () => {
        if (closed) return
        closed = true
        if (current === subject) current = undefined
        try {
          await subject?.close()
        } finally {
          restoreTimeZone?.()
        }
      }
      closeCurrent = close
      if (timeZone !== undefined) restoreTimeZone = useProcessTimeZone(timeZone)
      subject = await options.create()
      current = subject
      await subject.loadDataset(loadableCopy(dataset))
      return close
    },
    async close() {
      const close = closeCurrent
      closeCurrent = undefined
      await close?.()
    },
  }
}
