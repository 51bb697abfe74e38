import type { FastifyRequest } from 'fastify'
import { NotFoundError } from '../errors.js'
import type { WorkforceApiDecorator } from '../plugin.js'
import type { AuditAction, AuditEntry, AuditFor } from '../ports/audit-store.js'
import type { ApiKeyRecord } from '../ports/key-store.js'
import { WebhookAdminError, type WebhookEndpoint } from '../webhooks/webhook-manager.js'
import { auditId } from './audit-id.js'
import type { AdminSession } from './options.js'
import { scopeCatalogue, type ScopeEntry } from './scope-catalogue.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Audit entries handed to the stores by this request; forwarded to `onAudit` once it succeeded. */
    adminAudit: AuditEntry[] | null
  }
}

/** What the admin routes share: the API's managers and ports, and the company of the session. */
export interface AdminContext {
  api: WorkforceApiDecorator
  /** The scope catalogue by platform module, described once at registration (`./scope-catalogue.ts`). */
  scopes: ReadonlyMap<string, readonly ScopeEntry[]>
  /** The host's user and company of the request (set by the session stage). */
  session(request: FastifyRequest): AdminSession
  /** The audit entry of a change by this request's user: ids and facts only, never a secret. */
  auditFor(request: FastifyRequest, action: AuditAction, details?: Record<string, unknown>): AuditFor
  /** The key `keyId` of the session's company; another company's answers exactly like an unknown one (404). */
  ownKey(request: FastifyRequest, keyId: string): Promise<ApiKeyRecord>
  /** The endpoint `id` of the session's company; another company's answers exactly like an unknown one (404). */
  ownEndpoint(request: FastifyRequest, id: string): Promise<WebhookEndpoint>
}

/** A record as the admin API shows it: the company is the session's, never repeated. */
export function withoutCompany<T extends { company_id: number }>({ company_id: _company, ...view }: T): Omit<T, 'company_id'> {
  return view
}

function session(request: FastifyRequest): AdminSession {
  return request.adminSession as AdminSession
}

export function adminContext(api: WorkforceApiDecorator): AdminContext {
  const { webhooks, ports, clock } = api
  return {
    api,
    scopes: scopeCatalogue(api.resources, ports.storage),
    session,
    auditFor:
      (request, action, details = {}) =>
      (targetId) => {
        const { companyId, actor } = session(request)
        // One instant for both: the id's time order is the entry's.
        const now = clock.now()
        const entry: AuditEntry = {
          id: auditId(now),
          company_id: companyId,
          at: new Date(now),
          actor_id: actor.id,
          actor_name: actor.name,
          ip: request.ip ?? null,
          action,
          target_type: action.startsWith('key.') ? 'api_key' : 'webhook_endpoint',
          target_id: targetId,
          details,
        }
        ;(request.adminAudit ??= []).push(entry)
        return entry
      },
    async ownKey(request, keyId) {
      const record = await ports.keyStore.find(keyId)
      if (record === null || record.company_id !== session(request).companyId) throw new NotFoundError(`No API key with id ${keyId}`)
      return record
    },
    async ownEndpoint(request, id) {
      const endpoint = await webhooks.get(id).catch((error: unknown) => {
        if (error instanceof WebhookAdminError && error.reason === 'not_found') return null
        throw error
      })
      if (endpoint === null || endpoint.company_id !== session(request).companyId) throw new NotFoundError(`No webhook endpoint with id ${id}`)
      return endpoint
    },
  }
}
