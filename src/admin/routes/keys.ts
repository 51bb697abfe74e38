import { Type } from '@sinclair/typebox'
import { ValidationError } from '../../errors.js'
import { keyExpiryProblem, rotatedExpiry } from '../../keys/key-manager.js'
import type { AuditAction } from '../../ports/audit-store.js'
import { withoutCompany, type AdminContext } from '../admin-context.js'
import type { AdminResource, AdminRouteSpec } from '../admin-route.js'
import * as S from '../schemas.js'

const ROTATED = ' (rotated)'

/** A rotated key's name: `<name> (rotated)`, without piling up suffixes over several rotations. */
export function rotatedName(name: string | null): string {
  const base = name ?? 'Key'
  return base.endsWith(ROTATED) ? base : `${base.slice(0, 100 - ROTATED.length)}${ROTATED}`
}

const KeyParams = Type.Object({ key_id: S.KeyId }, { additionalProperties: false })
const Created = Type.Object({ key: Type.String(), data: S.Key }, { additionalProperties: false })

/** The company's API keys: list, create (plaintext shown once), disable, enable, revoke, rotate. */
export const keys: AdminResource = {
  name: 'keys',
  routes: ({ api, session, auditFor, ownKey }: AdminContext): AdminRouteSpec[] => {
    const { keys: manager, clock } = api
    const lifecycle = (['disable', 'enable', 'revoke'] as const).map(
      (action): AdminRouteSpec => ({
        method: 'POST',
        url: `/keys/:key_id/${action}`,
        summary: `${action[0]?.toUpperCase()}${action.slice(1)} a key`,
        schema: { params: KeyParams, body: S.Empty, response: { 200: S.data(S.Key) } },
        handler: async (request) => {
          const { key_id: keyId } = request.params as { key_id: string }
          await ownKey(request, keyId)
          const auditAction = `key.${action}d` as AuditAction
          return { data: withoutCompany(await manager[action](keyId, auditFor(request, auditAction))) }
        },
      }),
    )
    return [
      {
        method: 'GET',
        url: '/keys',
        summary: "The company's API keys",
        schema: { response: { 200: S.data(Type.Array(S.Key)) } },
        handler: async (request) => ({ data: (await manager.list({ companyId: session(request).companyId })).map(withoutCompany) }),
      },
      {
        method: 'POST',
        url: '/keys',
        summary: 'Create a key (its plaintext is in this answer only)',
        schema: { body: S.CreateKeyBody, response: { 201: Created } },
        handler: async (request, reply) => {
          const body = request.body as typeof S.CreateKeyBody.static
          const expiresAt = body.expires_at === undefined || body.expires_at === null ? null : new Date(body.expires_at)
          // `date-time` allows an offset: 9999-12-31T23:59:59-01:00 is in year 10000 once in UTC.
          const expiryProblem = expiresAt === null ? null : keyExpiryProblem(expiresAt)
          if (expiryProblem !== null) throw new ValidationError([{ field: 'expires_at', message: expiryProblem }])
          if (expiresAt !== null && expiresAt.getTime() <= clock.now()) {
            throw new ValidationError([{ field: 'expires_at', message: 'must be in the future (a key made already expired could never be used)' }])
          }
          const created = await manager.create(
            {
              companyId: session(request).companyId,
              name: body.name,
              scopes: body.scopes as never,
              expiresAt,
              rateLimit: body.rate_limit ?? null,
            },
            auditFor(request, 'key.created', { name: body.name, scopes: body.scopes, expires_at: body.expires_at ?? null, rate_limit: body.rate_limit ?? null }),
          )
          reply.code(201)
          return { key: created.key, data: withoutCompany(created.info) }
        },
      },
      ...lifecycle,
      {
        method: 'POST',
        url: '/keys/:key_id/rotate',
        summary: 'Create a twin of a key (same scopes, lifetime and rate limit); revoke the old one once switched',
        schema: { params: KeyParams, body: S.Empty, response: { 201: Created } },
        handler: async (request, reply) => {
          const { key_id: keyId } = request.params as { key_id: string }
          const old = await ownKey(request, keyId)
          const name = rotatedName(old.name)
          // The twin lives as long as the old key was meant to, from now (clamped to the latest
          // storable expiry): rotating an expiring (or expired) key gives a usable one, and a key
          // without expiry stays without.
          const expiresAt = rotatedExpiry(old, clock.now())
          const created = await manager.create(
            { companyId: old.company_id, name, scopes: old.scopes as never, expiresAt, rateLimit: old.rate_limit },
            auditFor(request, 'key.created', { name, scopes: old.scopes, rotated_from: keyId }),
          )
          reply.code(201)
          return { key: created.key, data: withoutCompany(created.info) }
        },
      },
    ]
  },
}
