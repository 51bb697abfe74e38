/**
 * The help of one command or subcommand: what `workforce-api <name> --help` prints, and the
 * usage lines a usage error repeats. Declared once beside the command, so the two never disagree.
 */
export interface HelpTopic {
  /** Usage lines, without `usage: `. */
  usage: readonly string[]
  /** What it does, in a sentence or two. */
  summary: string
  /** `[flag, meaning]`, in the order a user reaches for them. */
  flags?: readonly (readonly [string, string])[]
  /** Further sections, each a heading and its lines. */
  sections?: readonly { heading: string; lines: readonly string[] }[]
  examples?: readonly string[]
}

/** Help lines are wrapped at this width. */
const WIDTH = 96

export const DB_EXISTING_FLAG: readonly [string, string] = ['--db <file|postgres-url>', 'a SQLite file or a postgres:// URL; it must exist and be migrated (see migrate)']
export const NOT_MIGRATED_NOTE = 'A database that does not exist or is not migrated is refused, with the command to run.'

/** `--json`: stdout is one JSON object of this shape and nothing else. */
export function jsonOnlyFlag(shape: string): readonly [string, string] {
  return ['--json', `print one JSON object and nothing else: ${shape}`]
}

/** The message of a usage error: the usage lines, and where the full help is. */
export function usageText(name: string, topic: HelpTopic): string {
  return [...usageLines(topic), `run 'workforce-api ${name} --help' for more`].join('\n')
}

/** The text of `workforce-api <name> --help`. */
export function renderHelp(topic: HelpTopic): string {
  const lines = [...usageLines(topic), '', ...wrapWords(topic.summary.split(' '), ' ')]
  const flags = [...(topic.flags ?? []), ['-h, --help', 'show this help'] as const, ['--verbose', 'on failure, print the stack trace too'] as const]
  const width = Math.max(...flags.map(([flag]) => flag.length))
  lines.push('', 'flags:', ...flags.map(([flag, meaning]) => `  ${flag.padEnd(width)}  ${meaning}`))
  for (const section of topic.sections ?? []) lines.push('', `${section.heading}:`, ...section.lines.map((line) => `  ${line}`))
  if (topic.examples !== undefined) lines.push('', 'examples:', ...topic.examples.map((line) => `  ${line}`))
  return lines.join('\n')
}

/** `30s`, `5m`, `2h`, `500ms`: the largest unit that divides `ms`, as durations are written on the command line. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`
  }
  return `${ms}ms`
}

/** Values as comma-separated lines that fit the help's width (scopes, event types). */
export function listLines(values: readonly string[]): string[] {
  return wrapWords(values.map((value, index) => (index < values.length - 1 ? `${value},` : value)), ' ')
}

function usageLines(topic: HelpTopic): string[] {
  const [first, ...rest] = topic.usage
  return [`usage: ${first ?? ''}`, ...rest.map((line) => `       ${line}`)]
}

function wrapWords(words: readonly string[], separator: string): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of words) {
    if (line !== '' && line.length + separator.length + word.length > WIDTH) {
      lines.push(line)
      line = word
    } else line = line === '' ? word : `${line}${separator}${word}`
  }
  if (line !== '') lines.push(line)
  return lines
}
