import cliProgress from 'cli-progress'
import type { SyncProgress } from './sync.js'

/** How often the bars redraw, at most (per second). */
const REDRAWS_PER_SECOND = 10
/** The longest resource name, so the bars line up (`events` is the feed's bar). */
const NAME_WIDTH = 'employees'.length

export interface ProgressBars extends SyncProgress {
  /** Prints a line above the bars (a retry, say) without tearing them. */
  log(line: string): void
  /** Draws the bars one last time and lets go of the terminal. */
  stop(): void
}

/**
 * One bar per resource in one multibar, each sized by the `pagination.total` of its first page.
 * Drawn only when `enabled` (a terminal); otherwise `log` lines are written as they come.
 */
export function progressBars(options: { stream: NodeJS.WritableStream; enabled: boolean }): ProgressBars {
  if (!options.enabled) return { page() {}, log: (line) => options.stream.write(`${line}\n`), stop() {} }
  const multibar = new cliProgress.MultiBar(
    {
      stream: options.stream,
      format: '{resource} {bar} {value}/{total} records',
      barsize: 30,
      clearOnComplete: false,
      hideCursor: false,
      fps: REDRAWS_PER_SECOND,
    },
    cliProgress.Presets.shades_classic,
  )
  const bars = new Map<string, cliProgress.SingleBar>()
  return {
    page(resource, fetched, total) {
      let bar = bars.get(resource)
      if (bar === undefined) {
        bar = multibar.create(total, 0, { resource: resource.padEnd(NAME_WIDTH) })
        bars.set(resource, bar)
      }
      bar.setTotal(total)
      bar.update(fetched)
    },
    log(line) {
      multibar.log(`${line}\n`)
    },
    stop() {
      multibar.stop()
    },
  }
}
