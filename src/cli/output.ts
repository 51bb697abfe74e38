/** Where a command writes: human lines, then (with --json) one JSON object as the last line. */
export interface CliOutput {
  line(text: string): void
  json(value: unknown): void
  /** A notice for the operator, kept off stdout so scripts that read stdout never see it. Default: stderr. */
  note?(text: string): void
  /** Whether a person watches: stdout and stderr are terminals (a progress bar is drawn then). Default false. */
  interactive?: boolean
}

/** Writes `text` through `out.note`, or to stderr. */
export function noteTo(out: CliOutput, text: string): void {
  if (out.note === undefined) process.stderr.write(`workforce-api: ${text}\n`)
  else out.note(text)
}
