import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { NotFoundError } from '../errors.js'
import { ItemEnvelope } from '../http/pagination.js'
import { Id, NoQuery, Timestamp } from '../http/schema.js'
import type { Storage } from '../ports/storage.js'
import type { CompanyRecord } from '../records.js'
import { timestamp, type RouteAccess } from './read-routes.js'

/** Identity data only (spec 2.1). */
export const Company = Type.Object({
  id: Id,
  name: Type.String(),
  timezone: Type.String(),
  country: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
})

export function renderCompany(company: CompanyRecord) {
  return {
    id: company.id,
    name: company.name,
    timezone: company.timezone,
    country: company.country,
    created_at: timestamp(company.created_at),
    updated_at: timestamp(company.updated_at),
  }
}

/** `GET /v1/company`: the key's own company. There is no list and no lookup by id. */
export function registerCompanyRoute(app: FastifyInstance, storage: Storage, companyOf: (request: FastifyRequest) => number): void {
  const config: RouteAccess = { scope: 'company:read' }
  app.get(
    '/v1/company',
    { schema: { querystring: NoQuery, response: { 200: ItemEnvelope(Company) } }, config },
    async (request) => {
      const company = await storage.company(companyOf(request))
      if (company === null) throw new NotFoundError('Company not found')
      return { data: renderCompany(company) }
    },
  )
}
