import type { Dataset, MembershipRow } from '../ports/dataset.js'

/**
 * The request an operation's example makes, relative to the plugin's prefix: `npm run openapi`
 * sends it over the seed data and records the answer as the operation's example in the
 * reference document (`src/openapi/examples.generated.ts`).
 */
export interface ExampleRequest {
  method: 'GET' | 'POST' | 'PATCH'
  /** The path below the prefix: `/v1/todos/12`. */
  path: string
  query?: Readonly<Record<string, string | number | boolean>>
  body?: unknown
}

/**
 * The seed data an example request is written against, with the rows examples usually need.
 * Every row comes from `company`, the company whose key records the examples.
 */
export interface ExampleSeed {
  /** The whole seed dataset (`generateDataset()`). */
  data: Dataset
  /** The company the examples are recorded for. */
  company: number
  /** The first row of `rows` that belongs to `company`; throws when there is none. */
  first<T extends { company_id: number }>(rows: readonly T[]): T
  /** The first user of `company` (a membership, `user_id` is the user's id). */
  member(): MembershipRow
  /**
   * An accepted user who belongs to `company` alone: the only kind that may be activated or
   * deactivated (spec 3.3). Throws when the seed has none.
   */
  exclusiveMember(): MembershipRow
}

/**
 * A resource's examples, by operation id, in the order they are sent: a later request may
 * depend on an earlier one's effect (`deactivateUser` before `activateUser`), and the reference
 * document lists them in this order.
 *
 * @example
 * examples: (seed) => ({
 *   listRoles: { method: 'GET', path: '/v1/roles', query: { per_page: 2 } },
 *   getRole: { method: 'GET', path: `/v1/roles/${seed.first(seed.data.roles).id}` },
 * })
 */
export type ResourceExamples = (seed: ExampleSeed) => Readonly<Record<string, ExampleRequest>>

/** The `ExampleSeed` of `data` for `company`. */
export function exampleSeed(data: Dataset, company: number): ExampleSeed {
  const first = <T extends { company_id: number }>(rows: readonly T[]): T => {
    const row = rows.find((candidate) => candidate.company_id === company)
    if (row === undefined) throw new Error(`the seed has no row of company ${company} for an example`)
    return row
  }
  return {
    data,
    company,
    first,
    member: () => first(data.memberships),
    exclusiveMember: () => {
      const exclusive = data.memberships.find(
        (membership) =>
          membership.company_id === company &&
          membership.invitation_status === 'accepted' &&
          data.memberships.filter((other) => other.user_id === membership.user_id).length === 1,
      )
      if (exclusive === undefined) throw new Error(`the seed has no user exclusive to company ${company}`)
      return exclusive
    },
  }
}
