import type { FastifyInstance } from 'fastify'
import { NotFoundError } from '../errors.js'

/** Where `serve` mounts the plugin. */
export const SERVE_PREFIX = '/api/public'
/** The optional peer that renders the reference page (`openapi.referencePage`). */
const RENDERER = '@fastify/swagger-ui'

export const REFERENCE_PAGE_OFF =
  `the API reference page (${SERVE_PREFIX}/docs) is off: it needs the optional package ${RENDERER} ` +
  `(npm install ${RENDERER}, then start serve again); the OpenAPI document is at ${SERVE_PREFIX}/openapi.json`

/**
 * Whether the reference page can be served: its renderer is an optional peer dependency, so
 * `serve` serves the page where it is installed and starts without it elsewhere.
 */
export async function hasReferencePageRenderer(): Promise<boolean> {
  try {
    await import(RENDERER)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return false
    throw error
  }
}

/**
 * Without the renderer, `<prefix>/docs` answers 404 in the envelope with what to install,
 * instead of the bare "No route" a person would take for a wrong URL (issue 26).
 */
export function registerReferencePageHint(app: FastifyInstance): void {
  const explain = async () => {
    throw new NotFoundError(`The API reference page is not served: install ${RENDERER} beside fastify-workforce-api and restart serve. The OpenAPI document is at ${SERVE_PREFIX}/openapi.json`)
  }
  app.get(`${SERVE_PREFIX}/docs`, explain)
  app.get(`${SERVE_PREFIX}/docs/*`, explain)
}
