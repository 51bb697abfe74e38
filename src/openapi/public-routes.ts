import type { FastifyInstance } from 'fastify'
import { markUnguarded } from '../corridor/index.js'
import { DOCUMENT_DECORATOR, type OpenApiDocument } from './document.js'

/** Where the reference page lives under the plugin's prefix. */
export const REFERENCE_PAGE_PATH = '/docs'
/** Where the document is served under the plugin's prefix. */
export const DOCUMENT_PATH = '/openapi.json'

/**
 * The two routes that need no API key: the document, and (when the host asks for it) the
 * reference page rendered from it by `@fastify/swagger-ui`, whose assets are served from the
 * package itself, so the page works offline. They live in a child context the corridor leaves
 * unguarded (`markUnguarded`); everything else in the API's context stays guarded.
 */
export async function registerPublicRoutes(app: FastifyInstance, prefix: string, referencePage: boolean): Promise<void> {
  const documentOf = () => (app as unknown as Record<string, () => OpenApiDocument>)[DOCUMENT_DECORATOR]?.() as OpenApiDocument
  await app.register(async (open) => {
    markUnguarded(open)
    let body: string | undefined
    open.get(DOCUMENT_PATH, { schema: { hide: true } }, async (_request, reply) => {
      body ??= JSON.stringify(documentOf())
      // Public and the same for everyone: unlike API responses, it may be cached briefly.
      return reply.type('application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(body)
    })
    if (referencePage) await registerReferencePage(open, prefix, documentOf)
  })
}

async function registerReferencePage(app: FastifyInstance, prefix: string, documentOf: () => OpenApiDocument): Promise<void> {
  const swaggerUi = await loadSwaggerUi()
  // @fastify/swagger-ui reads `app.swagger()`; a host may have its own, so ours is handed over
  // through `transformSpecification` and `swagger` is only defined where nobody else has.
  if (!app.hasDecorator('swagger')) app.decorate('swagger', documentOf as never)
  await app.register(swaggerUi, {
    routePrefix: REFERENCE_PAGE_PATH,
    // The page links its assets by absolute path; ours live under the plugin's prefix.
    indexPrefix: prefix,
    // Scripts and styles from this server only; Swagger UI sets inline styles as it renders.
    staticCSP: "default-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'",
    transformSpecificationClone: false,
    transformSpecification: () => documentOf() as never,
    uiConfig: { docExpansion: 'list', deepLinking: true, defaultModelsExpandDepth: 0, displayOperationId: true, tryItOutEnabled: false },
  })
}

/** `@fastify/swagger-ui` is an optional peer dependency: only hosts that serve the page install it. */
async function loadSwaggerUi() {
  try {
    return (await import('@fastify/swagger-ui')).default
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new Error('fastify-workforce-api: openapi.referencePage needs @fastify/swagger-ui: npm install @fastify/swagger-ui', { cause: error })
    }
    throw error
  }
}
