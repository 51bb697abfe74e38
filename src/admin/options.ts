import type { FastifyRequest } from 'fastify'
import { OPTION_ERROR_CODES, WorkforceOptionError } from '../errors.js'
import { FASTIFY_REGISTER_OPTIONS, refuseUnknown } from '../options.js'
import type { AuditEntry } from '../ports/audit-store.js'

/** Who the host says is making an admin request: a user of the host, acting for one company. */
export interface AdminSession {
  companyId: number
  actor: { id: string; name: string }
}

export interface WorkforceAdminOptions {
  /**
   * The host's own authentication, called on every admin request (its session cookie, its
   * SSO…). Return the company and the user acting for it, or null for 401. The public API's
   * keys are never consulted here.
   */
  authorize: (request: FastifyRequest) => AdminSession | null | Promise<AdminSession | null>
  /** Where the admin routes are mounted, e.g. `/settings/integrations/api`. */
  prefix?: string
  /**
   * Replaces the default cross-site request check of mutations (a JSON content type and
   * `X-Requested-With: workforce-admin`) with the host's own, e.g. its CSRF token check.
   * Return true to let the request through. The JSON content type is required either way.
   */
  csrf?: (request: FastifyRequest) => boolean | Promise<boolean>
  /** Serves the integrations portal (the screens) at `<prefix>/portal`. Default false. */
  portal?: boolean
  /** Called with each audit entry after its change committed (to forward it to the host's own trail). */
  onAudit?: (entry: AuditEntry) => void | Promise<void>
}

const KNOWN = ['authorize', 'prefix', 'csrf', 'portal', 'onAudit', ...FASTIFY_REGISTER_OPTIONS]

export function checkAdminOptions(options: Partial<WorkforceAdminOptions>): void {
  const fail = (option: string, problem: string, code: WorkforceOptionError['code'] = OPTION_ERROR_CODES.invalid): never => {
    throw new WorkforceOptionError(code, option, `(workforceAdmin) ${problem}`)
  }
  refuseUnknown(options, KNOWN, '', 'workforceAdmin')
  if (options.authorize === undefined || options.authorize === null) fail('authorize', 'is required: the host authenticates its own users', OPTION_ERROR_CODES.missing)
  if (typeof options.authorize !== 'function') fail('authorize', 'must be a function (request) => { companyId, actor } | null')
  for (const name of ['csrf', 'onAudit'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') fail(name, 'must be a function')
  }
  if (options.portal !== undefined && typeof options.portal !== 'boolean') fail('portal', 'must be a boolean')
  if (options.prefix !== undefined && (typeof options.prefix !== 'string' || (options.prefix !== '' && !/^\/[^?#]*[^/?#]$/.test(options.prefix)))) {
    fail('prefix', 'must be empty or a path starting with / and not ending with /')
  }
}
