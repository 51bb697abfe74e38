import cliProgress from 'cli-progress'
import type { LoadProgress } from '../../adapters/sql/bulk-load.js'

/** How often the bar redraws, at most (per second). */
const REDRAWS_PER_SECOND = 10

/** A bulk load's progress, shown or not; `stop()` clears the way for what is printed next. */
export interface SeedProgress extends LoadProgress {
  stop(): void
}

/**
 * The progress of `seed`: a bar with rows per second on a terminal, nothing otherwise. Drawn
 * on stderr so stdout keeps only results, and only when stdout is a terminal too: output piped
 * to a file or another program (or `--json`) gets no bar at all.
 */
export function seedProgress(totalRows: number, options: { enabled: boolean; stream?: NodeJS.WriteStream }): SeedProgress {
  const stream = options.stream ?? process.stderr
  if (!options.enabled) return { stop() {} }
  const started = Date.now()
  let rows = 0
  let indexes = 0
  const bar = new cliProgress.SingleBar(
    {
      stream,
      format: 'seeding {bar} {percentage}% | {value}/{total} rows | {rate} rows/s | {stage}',
      barsize: 30,
      hideCursor: true,
      clearOnComplete: false,
      fps: REDRAWS_PER_SECOND,
      formatValue: (value, _options, type) => (type === 'value' || type === 'total' ? value.toLocaleString('en-US') : String(value)),
    },
    cliProgress.Presets.shades_classic,
  )
  const rate = () => Math.round(rows / Math.max(0.001, (Date.now() - started) / 1000)).toLocaleString('en-US')
  // Rows and indexes arrive interleaved when a worker thread loads some tables: say both.
  const stage = () => (indexes === 0 ? 'writing rows' : `writing rows, ${indexes} index(es) rebuilt`)
  bar.start(totalRows, 0, { rate: '0', stage: stage() })
  return {
    rowsLoaded(count) {
      rows += count
      bar.update(rows, { rate: rate(), stage: stage() })
    },
    indexBuilt() {
      indexes++
      bar.update(rows, { rate: rate(), stage: stage() })
    },
    stage(label) {
      bar.update(rows, { rate: rate(), stage: `${indexes} index(es) rebuilt, ${label}` })
    },
    stop() {
      bar.update(rows, { rate: rate(), stage: 'done' })
      bar.stop()
    },
  }
}
