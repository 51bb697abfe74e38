/** Where a command writes: human lines, or (with --json) one JSON object and nothing else. */
export interface CliOutput {
  line(text: string): void
  json(value: unknown): void
  /** A notice for the operator, kept off stdout so scripts that read stdout never see it. Default: stderr. */
  note?(text: string): void
  /** Whether a person watches: stdout and stderr are terminals (a progress bar is drawn then). Default false. */
  interactive?: boolean
}

/**
 * What a command with `--json` writes to: its human lines are dropped, so stdout is the one JSON
 * object and nothing else, for every command alike (issue 26: `keys list --json` printed both).
 * Notes still go to stderr.
 */
export function jsonOnly(out: CliOutput, json: boolean | undefined): CliOutput {
  return json === true ? { ...out, line: () => {} } : out
}

/** Writes `text` through `out.note`, or to stderr. */
export function noteTo(out: CliOutput, text: string): void {
  if (out.note === undefined) process.stderr.write(`workforce-api: ${text}\n`)
  else out.note(text)
}
