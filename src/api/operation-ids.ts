/** `listTodos` for `todos`, `listTimeEntries` for `time_entries`. */
export function listOperationId(name: string): string {
  return `list${pascal(name)}`
}

/** `getTodo` for `todos`: the name without its plural `s`. */
export function getOperationId(name: string): string {
  return `get${pascal(name).replace(/s$/, '')}`
}

function pascal(name: string): string {
  return name
    .split('_')
    .map((part) => `${part[0]?.toUpperCase()}${part.slice(1)}`)
    .join('')
}
