import { createRequire } from 'node:module'

/**
 * Loads a database driver that the package declares as an optional peer dependency
 * (`better-sqlite3`, `pg`): a host installs only the one its adapter uses. Called when the
 * adapter's module is first imported, so a missing driver fails there, with the command that
 * fixes it, instead of with Node's bare "Cannot find package". Any other failure (a driver
 * that is present but broken) is thrown as it is.
 *
 * `createRequire` rather than `import`: both drivers are CommonJS, and a static `import` of a
 * missing package fails before any of our code runs, in ESM, where nothing can catch it.
 *
 * @example
 * const pgDriver = requireDriver<typeof import('pg')>('pg', 'fastify-workforce-api/postgres')
 */
export function requireDriver<T>(driver: string, subpath: string): T {
  try {
    return createRequire(import.meta.url)(driver) as T
  } catch (error) {
    if (isMissing(error, driver)) {
      throw new Error(`${subpath} needs ${driver}: npm install ${driver}`, { cause: error })
    }
    throw error
  }
}

/** Whether `error` says that `driver` itself (not one of its own dependencies) is not installed. */
function isMissing(error: unknown, driver: string): boolean {
  if (!(error instanceof Error) || (error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') return false
  return error.message.startsWith(`Cannot find module '${driver}'`)
}
