import { it } from '../harness.js'
import type { ConformanceGroup } from '../group.js'
import { assertSelective, distinct, expectListed, looseRecords } from '../list-assertions.js'
import { FILTER_KEYS, LIST_RESOURCES, type FilterOf, type ListResource, type RecordOf } from '../resources.js'

/** A filter that selects rows whose `field` equals the filter value. */
type EqualityFilter = {
  [N in ListResource]: { resource: N; filter: keyof FilterOf<N> & string; field: keyof RecordOf<N> & string }
}[ListResource]

/** Every equality and boolean filter of the `Storage` port (src/ports/storage.ts). */
export const EQUALITY_FILTERS: readonly EqualityFilter[] = [
  { resource: 'users', filter: 'active', field: 'active' },
  { resource: 'projects', filter: 'status', field: 'status' },
  { resource: 'projects', filter: 'kind', field: 'kind' },
  { resource: 'projects', filter: 'customerId', field: 'customer_id' },
  { resource: 'shifts', filter: 'employeeId', field: 'employee_id' },
  { resource: 'shifts', filter: 'projectId', field: 'project_id' },
  { resource: 'shifts', filter: 'status', field: 'status' },
  { resource: 'absences', filter: 'employeeId', field: 'employee_id' },
  { resource: 'absences', filter: 'status', field: 'status' },
  { resource: 'expenses', filter: 'employeeId', field: 'employee_id' },
  { resource: 'expenses', filter: 'projectId', field: 'project_id' },
  { resource: 'expenses', filter: 'category', field: 'category' },
  { resource: 'todos', filter: 'status', field: 'status' },
  { resource: 'todos', filter: 'assignedTo', field: 'assigned_to' },
  { resource: 'todos', filter: 'listId', field: 'list_id' },
  { resource: 'todos', filter: 'important', field: 'important' },
]

type Scalar = string | number | boolean

/** Each filter alone, with every value the company has: exactly the rows with that value, never a null one. */
export const equalityFilters: ConformanceGroup = {
  title: 'equality and boolean filters',
  requires: [],
  define(ctx) {
    for (const { resource, filter, field } of EQUALITY_FILTERS) {
      it(`${resource}: ${filter} selects exactly the rows whose ${field} equals it`, async () => {
        for (const companyId of [1, 2]) {
          const all = looseRecords(ctx.expected, resource, companyId)
          const values = distinct(all.map((row) => row[field]).filter((value): value is Scalar => value !== null))
          if (values.length < 2) throw new Error(`conformance suite bug: ${resource}.${field} has ${values.length} value(s) in company ${companyId}`)
          for (const value of values) {
            await expectListed(ctx.storage(), resource, companyId, { [filter]: value }, all.filter((row) => row[field] === value))
          }
        }
      })
    }

    const combinable = [...new Set(EQUALITY_FILTERS.map((entry) => entry.resource))].filter(
      (resource) => EQUALITY_FILTERS.filter((entry) => entry.resource === resource).length > 1,
    )
    for (const resource of combinable) {
      const filters = EQUALITY_FILTERS.filter((entry) => entry.resource === resource)
      it(`${resource}: filters combine with AND (each row's own values, plus updatedSince)`, async () => {
        for (const companyId of [1, 2]) {
          const all = looseRecords(ctx.expected, resource, companyId)
          for (const row of all) {
            const filter: Record<string, unknown> = {}
            for (const { filter: name, field } of filters) if (row[field] !== null) filter[name] = row[field]
            const updatedAt = row.updated_at as Date
            filter.updatedSince = updatedAt
            const expected = all.filter(
              (candidate) =>
                filters.every(({ filter: name, field }) => !(name in filter) || candidate[field] === filter[name]) &&
                (candidate.updated_at as Date).getTime() >= updatedAt.getTime(),
            )
            await expectListed(ctx.storage(), resource, companyId, filter, expected)
          }
        }
      })
    }

    it('users: email matches the lower-cased address exactly, whatever the stored case', async () => {
      let mixedCase = 0
      for (const companyId of [1, 2]) {
        const users = ctx.expected.records('users', companyId)
        for (const user of users) {
          if (user.email !== user.email.toLowerCase()) mixedCase++
          const expected = users.filter((candidate) => candidate.email.toLowerCase() === user.email.toLowerCase())
          await expectListed(ctx.storage(), 'users', companyId, { email: user.email.toLowerCase() }, expected)
        }
      }
      if (mixedCase < 2) throw new Error('conformance suite bug: the fixture needs mixed-case emails')
    })

    it('users: email is an exact comparison, not a pattern (no LIKE wildcards, no prefix match)', async () => {
      const person = ctx.fixture.people.find((candidate) => candidate.id === ctx.edges.person)
      if (person === undefined) throw new Error('conformance suite bug: no edge person')
      const email = person.email.toLowerCase() // anna_maria.o+brien@example.com
      const near = [
        email.replace('_', 'x'), // `_` is LIKE's any-character
        email.replace('anna_maria', 'anna%'), // `%` is LIKE's any-sequence
        email.slice(0, 10),
        `${email} `,
        ` ${email}`,
        email.replace('+brien', 'brien'),
      ]
      for (const candidate of near) {
        await expectListed(ctx.storage(), 'users', 1, { email: candidate }, [], ` (near miss of ${email})`)
      }
      const expected = ctx.expected.records('users', 1).filter((user) => user.id === person.id)
      await expectListed(ctx.storage(), 'users', 1, { email }, expected)
    })

    it('projects: customerId matches a reference above 2^32', async () => {
      const all = looseRecords(ctx.expected, 'projects', 1)
      const expected = all.filter((row) => row.customer_id === ctx.edges.bigCustomerId)
      assertSelective(expected, all, 'customer_id above 2^32')
      await expectListed(ctx.storage(), 'projects', 1, { customerId: ctx.edges.bigCustomerId }, expected)
    })

    it('a filter member present with the value undefined is no filter (the plugin passes absent parameters so)', async () => {
      for (const resource of LIST_RESOURCES) {
        const filter = Object.fromEntries(FILTER_KEYS[resource].map((key) => [key, undefined]))
        for (const companyId of ctx.expected.companyIds) {
          await expectListed(ctx.storage(), resource, companyId, filter, ctx.expected.records(resource, companyId), ` (every member undefined: ${FILTER_KEYS[resource].join(', ') || 'none'})`)
        }
      }
    })

    it('a filter value no row has selects nothing', async () => {
      const storage = ctx.storage()
      const unused = 987_654_321
      for (const [resource, filter] of [
        ['projects', { customerId: unused }],
        ['shifts', { employeeId: unused }],
        ['shifts', { projectId: unused }],
        ['absences', { employeeId: unused }],
        ['expenses', { projectId: unused }],
        ['todos', { assignedTo: unused }],
        ['todos', { listId: unused }],
        ['users', { email: 'nobody@nowhere.invalid' }],
      ] as const) {
        await expectListed(storage, resource, 1, filter, [])
      }
    })
  },
}
