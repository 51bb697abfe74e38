/**
 * Pino redaction paths that keep credentials out of the host's logs. Our code never logs
 * headers; pass these to the host's logger in case its own serializers do:
 *
 * @example
 * Fastify({ logger: { redact: LOG_REDACT_PATHS } })
 */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
]
