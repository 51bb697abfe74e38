/**
 * Ids of the seed dataset the attack suites aim at, read from the dataset itself
 * (`generateDataset()`, through `DATASET` of the expected-reads helpers), never from the API.
 */
import { DATASET } from '../helpers/expected-reads.js'

/** What a path id or an id filter names. */
export type IdKind = 'users' | 'employees' | 'roles' | 'projects' | 'shifts' | 'absences' | 'expenses' | 'todos' | 'lists'

const sorted = (ids: Iterable<number>) => [...new Set(ids)].sort((a, b) => a - b)

/** The members (user ids) of `companyId`. */
export const memberIds = (companyId: number): number[] =>
  sorted(DATASET.memberships.filter((m) => m.company_id === companyId).map((m) => m.user_id))

/** Ids of `kind` that belong to `companyId`. */
export function idsOf(kind: IdKind, companyId: number): number[] {
  switch (kind) {
    case 'users':
      return memberIds(companyId)
    case 'lists':
      return sorted(DATASET.todoLists.filter((l) => l.company_id === companyId).map((l) => l.id))
    default:
      return sorted((DATASET[kind] as Array<{ id: number; company_id: number }>).filter((r) => r.company_id === companyId).map((r) => r.id))
  }
}

/**
 * Ids of `kind` of another company (2) that company 1 cannot see: for users, the people who
 * belong to company 2 and not to company 1 (a person in both is company 1's user too).
 */
export function foreignIds(kind: IdKind): number[] {
  const own = new Set(idsOf(kind, 1))
  return idsOf(kind, 2).filter((id) => !own.has(id))
}

/** Above every id of every table of the seed: no row has ever had such an id. */
export const MAX_SEED_ID = Math.max(
  ...DATASET.people.map((p) => p.id),
  ...DATASET.todoLists.map((l) => l.id),
  ...(['roles', 'employees', 'projects', 'shifts', 'absences', 'expenses', 'todos'] as const).flatMap((table) => DATASET[table].map((r) => r.id)),
)

/** The people's emails, by who they belong to: a new POST /v1/users with one of them is not a new person. */
export function emailsOf(companyId: number): string[] {
  const ids = new Set(memberIds(companyId))
  return DATASET.people.filter((p) => ids.has(p.id)).map((p) => p.email)
}

/** What the `:id` of each route template names. */
export function pathKind(url: string): IdKind | undefined {
  const match = /^\/v1\/(users|employees|roles|projects|shifts|absences|expenses|todos)\/:id/.exec(url)
  return match === null ? undefined : (match[1] as IdKind)
}
