/**
 * What changed in an `*.updated` event: the top-level fields whose rendering differs between
 * the record before the change and after it, each with its value before. Both sides are the
 * resource's renderer output (what GET serializes), so a field counts as changed only when a
 * client would see a different value — a change to something GET never shows is not listed.
 */

/**
 * The fields of `fields` (the resource schema's top-level properties, in schema order) whose
 * value in `after` is not the same as in `before`, with their `before` values.
 *
 * @example
 * changedFields(['id', 'title', 'updated_at'], { id: 1, title: 'Old', updated_at: 'T0' }, { id: 1, title: 'New', updated_at: 'T1' })
 * // → { title: 'Old', updated_at: 'T0' }
 */
export function changedFields(fields: readonly string[], before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const changed: Record<string, unknown> = {}
  for (const field of fields) {
    if (!sameRendered(before[field], after[field])) changed[field] = before[field]
  }
  return changed
}

/**
 * Deep equality of two rendered values, as their JSON would compare: arrays by position, objects
 * by key whatever the order, a member set to `undefined` the same as one left out (JSON drops
 * both), and dates by instant (a host's renderer may hand the serializer `Date`s).
 */
export function sameRendered(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime()
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((value, index) => sameRendered(value, b[index]))
  }
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  for (const key of Object.keys(left)) {
    if (!sameRendered(left[key], right[key])) return false
  }
  for (const key of Object.keys(right)) {
    if (!Object.hasOwn(left, key) && right[key] !== undefined) return false
  }
  return true
}
