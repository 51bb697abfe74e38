import type { CompanyRecord, UserRecord } from '../ports/records.js'
import type { Dataset } from '../ports/dataset.js'
import { LIST_RESOURCES, RECORD_KEYS, type ListResource, type RecordOf } from './resources.js'

/**
 * Expected answers, derived from the fixture with plain array logic: what a correct adapter
 * returns, computed without any adapter. Every value is a fresh deep copy.
 */
export interface ExpectedAnswers {
  /** Company ids of the fixture, including the empty company 3. */
  readonly companyIds: readonly number[]
  /** The company's records of `resource`, as the port returns them, ordered by id. */
  records<N extends ListResource>(resource: N, companyId: number): Array<RecordOf<N>>
  /** The ids of every row of `resource` that belongs to another company than `companyId`. */
  foreignIds(resource: ListResource, companyId: number): number[]
  company(companyId: number): CompanyRecord | null
  /** The company's IANA time zone. */
  timeZone(companyId: number): string
}

/** Copies exactly the record's keys: the fixture rows also carry private, storage-only columns. */
function project<R>(row: object, keys: readonly string[]): R {
  const source = row as Record<string, unknown>
  const record: Record<string, unknown> = {}
  for (const key of keys) record[key] = structuredClone(source[key])
  return record as R
}

/**
 * A company's users: each membership (whose `user_id` is the user's id, of this company only),
 * joined once accepted with its person; dates are the membership's. A pending membership has no
 * person: it is what the company sent, inactive.
 */
function usersOf(dataset: Dataset, companyId: number): UserRecord[] {
  const people = new Map(dataset.people.map((person) => [person.id, person]))
  return dataset.memberships
    .filter((membership) => membership.company_id === companyId)
    .map((membership) => {
      const pending = membership.invitation_status === 'pending'
      if (pending !== (membership.invited !== null) || pending !== (membership.person_id === null)) {
        throw new Error(`conformance fixture: membership ${companyId}/${membership.user_id} must carry invited data and no person exactly while pending`)
      }
      const person = pending ? undefined : people.get(membership.person_id as number)
      if (!pending && person === undefined) throw new Error(`conformance fixture: membership of unknown person ${membership.person_id}`)
      const shown = membership.invited ?? person!
      return {
        id: membership.user_id,
        email: shown.email,
        first_name: shown.first_name,
        last_name: shown.last_name,
        active: pending ? false : person!.active,
        role_ids: [...membership.role_ids],
        invitation_status: membership.invitation_status,
        created_at: new Date(membership.created_at.getTime()),
        updated_at: new Date(membership.updated_at.getTime()),
      }
    })
}

function rowsOf(dataset: Dataset, resource: ListResource, companyId: number): Array<{ id: number }> {
  if (resource === 'users') return usersOf(dataset, companyId)
  const rows: Array<{ id: number; company_id: number }> = dataset[resource]
  return rows.filter((row) => row.company_id === companyId).map((row) => project(row, RECORD_KEYS[resource]))
}

export function createExpectedAnswers(dataset: Dataset): ExpectedAnswers {
  const companyIds = dataset.companies.map((company) => company.id)
  const cache = new Map<string, Array<{ id: number }>>()
  const cached = (resource: ListResource, companyId: number) => {
    const key = `${resource}:${companyId}`
    let rows = cache.get(key)
    if (rows === undefined) {
      rows = rowsOf(dataset, resource, companyId).sort((a, b) => a.id - b.id)
      cache.set(key, rows)
    }
    return rows
  }
  for (const resource of LIST_RESOURCES) {
    for (const companyId of companyIds) cached(resource, companyId)
  }

  return {
    companyIds,
    records<N extends ListResource>(resource: N, companyId: number) {
      return structuredClone(cached(resource, companyId)) as Array<RecordOf<N>>
    },
    foreignIds(resource, companyId) {
      const own = new Set(cached(resource, companyId).map((row) => row.id))
      const ids = companyIds.filter((id) => id !== companyId).flatMap((id) => cached(resource, id).map((row) => row.id))
      return [...new Set(ids)].filter((id) => !own.has(id)).sort((a, b) => a - b)
    },
    company(companyId) {
      const company = dataset.companies.find((candidate) => candidate.id === companyId)
      return company === undefined ? null : project<CompanyRecord>(company, RECORD_KEYS.company)
    },
    timeZone(companyId) {
      const company = dataset.companies.find((candidate) => candidate.id === companyId)
      if (company === undefined) throw new Error(`conformance fixture: no company ${companyId}`)
      return company.timezone
    },
  }
}
