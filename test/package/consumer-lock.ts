/**
 * A consumer project's package-lock.json cut from ours, so the consumer installs with
 * `npm ci --offline`: exactly the versions our own `npm ci` installed (and cached), and no
 * registry. `npm install` of a range would pick the newest version in the registry's metadata,
 * which the cache need not hold.
 */

interface LockEntry {
  version?: string
  resolved?: string
  integrity?: string
  license?: string
  dev?: boolean
  optional?: boolean
  devOptional?: boolean
  peer?: boolean
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  peerDependenciesMeta?: Record<string, { optional?: boolean }>
  [field: string]: unknown
}

export interface Lockfile {
  name: string
  version: string
  lockfileVersion: number
  requires: boolean
  packages: Record<string, LockEntry>
}

/** The packed package: its manifest, and where the consumer finds the tarball. */
export interface PackedPackage {
  manifest: LockEntry & { name: string; version: string }
  /** As written in the consumer's package.json and lock, e.g. `file:../pkg-0.1.0.tgz`. */
  spec: string
  integrity: string
}

/**
 * The consumer's package.json dependencies and lock: `packed`, plus `extra` packages at the
 * versions our lock has (`fastify`, `@types/node`, a driver…), plus everything they need, at the
 * same paths as in our tree.
 */
export function consumerLock(ours: Lockfile, name: string, packed: PackedPackage, extra: readonly string[]): { dependencies: Record<string, string>; lock: Lockfile } {
  const dependencies: Record<string, string> = { [packed.manifest.name]: packed.spec }
  for (const dependency of extra) {
    const entry = ours.packages[`node_modules/${dependency}`]
    if (entry?.version === undefined) throw new Error(`consumerLock: ${dependency} is not in our package-lock.json`)
    dependencies[dependency] = entry.version
  }

  const packages: Record<string, LockEntry> = {
    '': { name, version: '0.0.0', dependencies },
    [`node_modules/${packed.manifest.name}`]: {
      ...pick(packed.manifest, ['version', 'license', 'dependencies', 'peerDependencies', 'peerDependenciesMeta', 'engines', 'bin']),
      resolved: packed.spec,
      integrity: packed.integrity,
    },
  }
  const queue: Array<{ from: string; dependency: string; optional: boolean }> = []
  const enqueue = (from: string, entry: LockEntry) => {
    for (const dependency of Object.keys(entry.dependencies ?? {})) queue.push({ from, dependency, optional: false })
    for (const dependency of Object.keys(entry.optionalDependencies ?? {})) queue.push({ from, dependency, optional: true })
    for (const dependency of Object.keys(entry.peerDependencies ?? {})) {
      if (entry.peerDependenciesMeta?.[dependency]?.optional !== true) queue.push({ from, dependency, optional: false })
    }
  }
  for (const dependency of extra) queue.push({ from: '', dependency, optional: false })
  enqueue(`node_modules/${packed.manifest.name}`, packed.manifest)

  while (queue.length > 0) {
    const { from, dependency, optional } = queue.shift()!
    const path = resolveInLock(ours, from, dependency)
    if (path === undefined) {
      if (optional) continue // a platform package npm did not record for this machine
      throw new Error(`consumerLock: ${dependency} (needed by ${from || 'the consumer'}) is not in our package-lock.json`)
    }
    if (path in packages) continue
    const { dev, devOptional, peer, optional: wasOptional, ...entry } = ours.packages[path]!
    packages[path] = wasOptional === true || devOptional === true ? { ...entry, optional: true } : entry
    enqueue(path, entry)
  }
  return { dependencies, lock: { name, version: '0.0.0', lockfileVersion: 3, requires: true, packages } }
}

/** Where Node would find `dependency` from the package at `from`: its own node_modules, then each parent's. */
function resolveInLock(lock: Lockfile, from: string, dependency: string): string | undefined {
  let base = from
  for (;;) {
    const candidate = base === '' ? `node_modules/${dependency}` : `${base}/node_modules/${dependency}`
    if (candidate in lock.packages) return candidate
    if (base === '') return undefined
    const parent = base.lastIndexOf('/node_modules/')
    base = parent === -1 ? '' : base.slice(0, parent)
  }
}

function pick<T extends object>(object: T, keys: readonly string[]): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([key]) => keys.includes(key))) as Partial<T>
}
