import { Type } from '@sinclair/typebox'
import { NotFoundError } from '../errors.js'
import type { CompanyRecord } from '../ports/records.js'
import { ItemEnvelope } from './pagination.js'
import { defineResource, exactKeys } from './resource.js'
import { companyOf } from './route-spec.js'
import { Id, NoQuery, Timestamp, timestamp } from './wire.js'

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
export const company = defineResource({
  name: 'company',
  singular: 'company',
  component: 'Company',
  module: 'core',
  scope: 'company:read',
  item: Company,
  render: renderCompany,
  storage: { company: 'function' },
  routes: ({ storage }) => [
    {
      method: 'GET',
      url: '/v1/company',
      operationId: 'getCompany',
      summary: 'Get your own company',
      tag: 'company',
      scope: 'company:read',
      schema: { querystring: NoQuery, response: { 200: ItemEnvelope(Company) } },
      async handler(request) {
        const record = await storage.company(companyOf(request))
        if (record === null) throw new NotFoundError('Company not found')
        return { data: renderCompany(record) }
      },
    },
  ],
  events: { actions: ['updated'], position: 8 },
  conformance: {
    recordKeys: exactKeys<CompanyRecord>()(['id', 'name', 'timezone', 'country', 'created_at', 'updated_at']),
  },
  docs: {
    description: 'Your own company: name, country, time zone.',
    fields: {
      id: 'Your company id.',
      timezone: 'IANA time zone of the company calendar: day filters (`date_from`, `due_from`, …) use it.',
      country: 'ISO 3166-1 alpha-2 country code.',
    },
    operations: {
      getCompany: {
        description: 'Returns the company your API key belongs to. There is no list and no lookup by id: a key sees only its own company.',
        responses: { 200: 'Your company.' },
      },
    },
    examples: () => ({ getCompany: { method: 'GET', path: '/v1/company' } }),
  },
})
