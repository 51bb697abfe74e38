import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, extname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
}

/**
 * The portal's page: only its own scripts, styles and the admin API (same origin); nothing
 * from elsewhere, no inline script, no framing by another site.
 */
export const PORTAL_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'; require-trusted-types-for 'script'"

/** Where the built portal is: beside the bundle in `dist/`, or `dist/portal` of the repository when run from source. */
export function portalDirectory(from: string = import.meta.url): string | undefined {
  let dir = dirname(fileURLToPath(from))
  for (let depth = 0; depth < 4; depth += 1) {
    // `dist/portal` first: the repository's `portal/` is the (unbuilt) source.
    for (const candidate of [join(dir, 'dist', 'portal'), join(dir, 'portal')]) {
      if (existsSync(join(candidate, 'index.html')) && existsSync(join(candidate, 'workforce-portal.js'))) return candidate
    }
    dir = dirname(dir)
  }
  return undefined
}

function filesOf(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesOf(root, path) : [relative(root, path).split(sep).join('/')]
  })
}

/**
 * Serves the built portal at `<prefix>/portal` from memory: the files are read once, at
 * registration, and only those names answer (no path is ever joined from a request). The page
 * needs no session to load; every call it makes goes through `authorize`.
 */
export async function registerPortal(app: FastifyInstance): Promise<void> {
  const root = portalDirectory()
  if (root === undefined) {
    throw new Error('workforceAdmin: the portal is not built (dist/portal is missing); run `npm run build`, or pass portal: false')
  }
  const files = new Map<string, { body: Buffer; type: string }>()
  for (const name of filesOf(root)) {
    const type = TYPES[extname(name)]
    if (type !== undefined) files.set(name, { body: readFileSync(join(root, name)), type })
  }
  const index = files.get('index.html') as { body: Buffer; type: string }
  const page = { 'content-security-policy': PORTAL_CSP, 'x-frame-options': 'SAMEORIGIN', 'referrer-policy': 'no-referrer' }

  app.get('/portal', { schema: { hide: true } }, async (request, reply) => {
    // Relative asset URLs resolve against the directory: send `/portal` on to `/portal/`.
    return reply.redirect(`${request.url.split('?')[0]}/`, 308)
  })
  app.get('/portal/', { schema: { hide: true } }, async (_request, reply) => reply.headers(page).type(index.type).send(index.body))
  app.get('/portal/*', { schema: { hide: true } }, async (request, reply) => {
    const name = (request.params as { '*': string })['*']
    const file = files.get(name)
    if (file === undefined || name === 'index.html') return reply.callNotFound()
    // Hashed names never change: cache them for a year.
    const immutable = /\.[0-9a-zA-Z_-]{8,}\.(js|css)$/.test(name)
    return reply
      .headers(page)
      .header('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .type(file.type)
      .send(file.body)
  })
}
