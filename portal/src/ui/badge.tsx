export type Tone = 'success' | 'danger' | 'warning' | 'neutral' | 'info'

/** A short state word; the tone is colour and never the only cue (the word is always there). */
export function Badge({ tone, children }: { tone: Tone; children: string }) {
  return <span class={`badge badge-${tone}`}>{children}</span>
}
