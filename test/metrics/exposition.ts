/** One sample line of the Prometheus text exposition format. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

/** The samples of an exposition text (comments and blank lines skipped); a line that is neither fails. */
export function parseExposition(text: string): Sample[] {
  return text.split('\n').flatMap((line): Sample[] => {
    if (line === '' || line.startsWith('#')) return []
    const match = SAMPLE.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name as string] = (value as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
    return [{ name: match[1] as string, labels, value: Number(match[3]) }]
  })
}

/** The value of the one sample named `name` whose labels include `labels`; undefined if none, an error if several. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}
