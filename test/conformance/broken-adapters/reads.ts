/**
 * Broken read adapters: paging, totals, ordering, filters, windows, time zones, money, values,
 * record shape and tenant isolation — the bugs an adapter over a host's own schema is most
 * likely to ship with (docs/adapters.md, "Common pitfalls").
 */
import { LIST_RESOURCES, type ListResource } from '../../../src/conformance/resources.js'
import { everything, mapFields, mapped, override, reshaped, withReaders, type AnyFilter, type AnyRecord, type BrokenAdapter } from './wrap.js'

const ALL = LIST_RESOURCES
const byTime = (field: string) => (a: AnyRecord, b: AnyRecord) => (a[field] as Date).getTime() - (b[field] as Date).getTime()

/** A filter with `members` taken out, and what they were. */
function without(filter: AnyFilter, ...members: string[]): AnyFilter {
  return Object.fromEntries(Object.entries(filter).filter(([key]) => !members.includes(key)))
}

/** A day `YYYY-MM-DD` as the local-midnight `Date` a driver builds for a `date` column. */
const localMidnight = (day: string) => {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number]
  return new Date(year, month - 1, date)
}

export const BROKEN_READS: readonly BrokenAdapter[] = [
  // Paging and totals
  {
    name: 'total-is-page-length',
    area: 'totals',
    bug: '`total` is the number of rows on the page (`rows.length`), not of every matching row',
    caughtBy: 'ordering and pagination',
    break: ({ storage }) => ({
      storage: withReaders(storage, ALL, (base) => ({
        async list(companyId, filter, window) {
          const { rows } = await base.list(companyId, filter, window)
          return { rows, total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'offset-as-page-number',
    area: 'paging',
    bug: 'the offset is taken for a page number: `OFFSET offset * limit`',
    caughtBy: 'ordering and pagination',
    break: ({ storage }) => ({
      storage: withReaders(storage, ALL, (base) => ({
        list: (companyId, filter, window) => base.list(companyId, filter, { limit: window.limit, offset: window.offset * window.limit }),
      })),
    }),
  },
  {
    name: 'limit-plus-one',
    area: 'paging',
    bug: 'a page holds `limit + 1` rows (the "is there a next page" probe row is not cut off)',
    caughtBy: 'ordering and pagination',
    break: ({ storage }) => ({
      storage: withReaders(storage, ALL, (base) => ({
        list: (companyId, filter, window) => base.list(companyId, filter, { limit: window.limit + 1, offset: window.offset }),
      })),
    }),
  },
  {
    name: 'past-the-end-is-last-page',
    area: 'paging',
    bug: 'a window past the end returns the last page instead of no rows',
    caughtBy: 'ordering and pagination',
    break: ({ storage }) => ({
      storage: withReaders(
        storage,
        ALL,
        (base) => ({
          async list(companyId, filter, window) {
            const result = await base.list(companyId, filter, window)
            if (result.rows.length > 0 || result.total === 0) return result
            const offset = Math.max(0, result.total - window.limit)
            return base.list(companyId, filter, { limit: window.limit, offset })
          },
        }),
      ),
    }),
  },
  {
    name: 'total-ignores-filter',
    area: 'totals',
    bug: '`total` comes from a `count(*)` of the company without the filter',
    caughtBy: 'ordering and pagination',
    break: ({ storage }) => ({
      storage: withReaders(storage, ALL, (base) => ({
        async list(companyId, filter, window) {
          const { rows } = await base.list(companyId, filter, window)
          const { total } = await base.list(companyId, {}, { limit: 1, offset: 0 })
          return { rows, total }
        },
      })),
    }),
  },
  {
    name: 'total-counts-every-company',
    area: 'totals',
    bug: 'the `count(*)` misses `WHERE company_id = ?`: `total` counts every company\'s rows',
    caughtBy: 'tenant isolation',
    break: ({ storage }) => ({
      storage: withReaders(storage, ALL, (base) => ({
        async list(companyId, filter, window) {
          const { rows } = await base.list(companyId, filter, window)
          let total = 0
          for (const company of [1, 2, 3]) total += (await base.list(company, filter, { limit: 1, offset: 0 })).total
          return { rows, total }
        },
      })),
    }),
  },

  // Ordering
  {
    name: 'orders-by-created-at',
    area: 'ordering',
    bug: '`ORDER BY created_at` (the order rows were made in, which the seed used to share with ids)',
    caughtBy: 'ordering and pagination',
    break: ({ storage }) => ({ storage: withReaders(storage, ALL, reshaped((rows) => [...rows].sort((a, b) => byTime('created_at')(a, b) || a.id - b.id))) }),
  },
  {
    name: 'orders-ids-as-text',
    area: 'ordering',
    bug: 'ids kept in a text column and ordered as text: 1063 before 13',
    caughtBy: 'ordering and pagination',
    break: ({ storage }) => ({ storage: withReaders(storage, ALL, reshaped((rows) => [...rows].sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1)))) }),
  },
  {
    name: 'no-order-by',
    area: 'ordering',
    bug: 'no `ORDER BY`: rows come back in the order they were inserted',
    caughtBy: 'ordering and pagination',
    break: ({ storage }, adapter) => {
      const position = (resource: ListResource, id: number): number => {
        const data = adapter.storage.data
        if (resource === 'users') return data.memberships.findIndex((membership) => membership.user_id === id)
        return (data[resource] as Array<{ id: number }>).findIndex((row) => row.id === id)
      }
      return {
        storage: withReaders(storage, ALL, (base, resource) => reshaped((rows) => [...rows].sort((a, b) => position(resource, a.id) - position(resource, b.id)))(base)),
      }
    },
  },

  // Filters
  {
    name: 'updated-since-exclusive',
    area: 'filters',
    bug: '`updated_at > updatedSince` where the spec says `>=`',
    caughtBy: 'updatedSince',
    break: ({ storage }) => ({
      storage: withReaders(storage, ALL, (base) => ({
        list: (companyId, filter, window) =>
          base.list(companyId, filter.updatedSince instanceof Date ? { ...filter, updatedSince: new Date(filter.updatedSince.getTime() + 1) } : filter, window),
      })),
    }),
  },
  {
    name: 'updated-since-whole-seconds',
    area: 'filters',
    bug: 'the bound is sent as whole seconds (`Math.floor(ms / 1000)`), so rows of the same second before it match',
    caughtBy: 'updatedSince',
    break: ({ storage }) => ({
      storage: withReaders(storage, ALL, (base) => ({
        list: (companyId, filter, window) =>
          base.list(
            companyId,
            filter.updatedSince instanceof Date ? { ...filter, updatedSince: new Date(Math.floor(filter.updatedSince.getTime() / 1000) * 1000) } : filter,
            window,
          ),
      })),
    }),
  },
  {
    name: 'email-like-wildcards',
    area: 'filters',
    bug: "`lower(email) LIKE ?`: `_` and `%` in the address are wildcards",
    caughtBy: 'equality and boolean filters',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['users'], (base) => ({
        async list(companyId, filter, window) {
          if (typeof filter.email !== 'string') return base.list(companyId, filter, window)
          const escaped = filter.email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          const pattern = new RegExp(`^${escaped.replaceAll('_', '.').replaceAll('%', '.*')}$`)
          const rows = (await everything(base, companyId, without(filter, 'email'))).filter((row) => pattern.test(String(row.email).toLowerCase()))
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'email-case-sensitive',
    area: 'filters',
    bug: 'the email is compared as stored (`email = ?`), so a mixed-case address is never found',
    caughtBy: 'equality and boolean filters',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['users'], (base) => ({
        async list(companyId, filter, window) {
          if (typeof filter.email !== 'string') return base.list(companyId, filter, window)
          const rows = (await everything(base, companyId, without(filter, 'email'))).filter((row) => row.email === filter.email)
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'email-prefix-match',
    area: 'filters',
    bug: "`lower(email) LIKE ? || '%'`: the filter matches every address it starts",
    caughtBy: 'equality and boolean filters',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['users'], (base) => ({
        async list(companyId, filter, window) {
          if (typeof filter.email !== 'string') return base.list(companyId, filter, window)
          const email = filter.email
          const rows = (await everything(base, companyId, without(filter, 'email'))).filter((row) => String(row.email).toLowerCase().startsWith(email))
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'undefined-member-is-a-filter',
    area: 'filters',
    bug: "filters are applied for every member `in` the filter object, so `{ status: undefined }` matches nothing",
    caughtBy: 'equality and boolean filters',
    break: ({ storage }) => ({
      storage: withReaders(storage, ALL, (base) => ({
        async list(companyId, filter, window) {
          if (Object.values(filter).some((value) => value === undefined)) return { rows: [], total: 0 }
          return base.list(companyId, filter, window)
        },
      })),
    }),
  },
  {
    name: 'false-is-no-filter',
    area: 'filters',
    bug: '`if (filter.important)`: a boolean filter set to `false` is ignored',
    caughtBy: 'equality and boolean filters',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['users', 'todos'], (base) => ({
        list: (companyId, filter, window) =>
          base.list(companyId, Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== false)), window),
      })),
    }),
  },
  {
    name: 'project-filter-matches-null',
    area: 'filters',
    bug: '`project_id = ? OR project_id IS NULL`: rows without a project match every projectId',
    caughtBy: 'equality and boolean filters',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['shifts', 'expenses'], (base) => ({
        async list(companyId, filter, window) {
          if (filter.projectId === undefined) return base.list(companyId, filter, window)
          const rows = (await everything(base, companyId, without(filter, 'projectId'))).filter((row) => row.project_id === filter.projectId || row.project_id === null)
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'filters-or-instead-of-and',
    area: 'filters',
    bug: 'equality filters joined with OR: `employee_id = ? OR status = ?`',
    caughtBy: 'equality and boolean filters',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['shifts'], (base) => ({
        async list(companyId, filter, window) {
          const members = ['employeeId', 'projectId', 'status'].filter((key) => filter[key] !== undefined)
          if (members.length < 2) return base.list(companyId, filter, window)
          const ids = new Set<number>()
          for (const member of members) {
            const alone = { ...without(filter, ...members), [member]: filter[member] }
            for (const row of await everything(base, companyId, alone)) ids.add(row.id)
          }
          const rows = (await everything(base, companyId, without(filter, ...members))).filter((row) => ids.has(row.id))
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'reference-bound-as-int32',
    area: 'filters',
    bug: 'the customerId parameter is bound as a 32-bit integer: 2^32 + 1 becomes 1',
    caughtBy: 'equality and boolean filters',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['projects'], (base) => ({
        list: (companyId, filter, window) =>
          base.list(companyId, typeof filter.customerId === 'number' ? { ...filter, customerId: filter.customerId | 0 } : filter, window),
      })),
    }),
  },

  // Day and instant windows
  {
    name: 'date-to-exclusive',
    area: 'filters',
    bug: '`date < dateTo`: the last day of a window is left out',
    caughtBy: 'day windows on day fields',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['absences', 'expenses'], (base) => ({
        async list(companyId, filter, window) {
          if (typeof filter.dateTo !== 'string') return base.list(companyId, filter, window)
          const dateTo = filter.dateTo
          const rows = (await everything(base, companyId, filter)).filter((row) => row.date !== dateTo)
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'date-from-exclusive',
    area: 'filters',
    bug: '`date > dateFrom`: the first day of a window is left out',
    caughtBy: 'day windows on day fields',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['absences', 'expenses'], (base) => ({
        async list(companyId, filter, window) {
          if (typeof filter.dateFrom !== 'string') return base.list(companyId, filter, window)
          const dateFrom = filter.dateFrom
          const rows = (await everything(base, companyId, filter)).filter((row) => row.date !== dateFrom)
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'day-window-mixes-utc-and-local-midnight',
    area: 'time zones',
    bug: 'the bounds become `new Date(day)` (UTC midnight) and each row\'s day a local-midnight `Date`; right only when the process runs in UTC',
    caughtBy: 'day windows on day fields',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['absences', 'expenses'], (base) => ({
        async list(companyId, filter, window) {
          const { dateFrom, dateTo } = filter
          if (typeof dateFrom !== 'string' && typeof dateTo !== 'string') return base.list(companyId, filter, window)
          const rows = (await everything(base, companyId, without(filter, 'dateFrom', 'dateTo'))).filter((row) => {
            const day = localMidnight(String(row.date)).getTime()
            return (typeof dateFrom !== 'string' || day >= new Date(dateFrom).getTime()) && (typeof dateTo !== 'string' || day <= new Date(dateTo).getTime())
          })
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'starts-from-exclusive',
    area: 'filters',
    bug: '`starts_at > startsFrom`: a shift starting exactly at midnight is lost',
    caughtBy: 'shift windows (instant bounds)',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['shifts'], (base) => ({
        list: (companyId, filter, window) =>
          base.list(companyId, filter.startsFrom instanceof Date ? { ...filter, startsFrom: new Date(filter.startsFrom.getTime() + 1) } : filter, window),
      })),
    }),
  },
  {
    name: 'starts-before-inclusive',
    area: 'filters',
    bug: '`starts_at <= startsBefore`: the next day\'s midnight shift is counted in',
    caughtBy: 'shift windows (instant bounds)',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['shifts'], (base) => ({
        list: (companyId, filter, window) =>
          base.list(companyId, filter.startsBefore instanceof Date ? { ...filter, startsBefore: new Date(filter.startsBefore.getTime() + 1) } : filter, window),
      })),
    }),
  },
  {
    name: 'shift-bounds-as-utc-days',
    area: 'time zones',
    bug: 'the adapter does its own day maths: the bounds are cut to UTC days (`toISOString().slice(0, 10)`) and compared with `date(starts_at)`',
    caughtBy: 'shift windows (instant bounds)',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['shifts'], (base) => ({
        async list(companyId, filter, window) {
          const { startsFrom, startsBefore } = filter
          if (!(startsFrom instanceof Date) && !(startsBefore instanceof Date)) return base.list(companyId, filter, window)
          const utcDay = (instant: Date) => instant.toISOString().slice(0, 10)
          const rows = (await everything(base, companyId, without(filter, 'startsFrom', 'startsBefore'))).filter((row) => {
            const day = utcDay(row.starts_at as Date)
            return (!(startsFrom instanceof Date) || day >= utcDay(startsFrom)) && (!(startsBefore instanceof Date) || day < utcDay(startsBefore))
          })
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'due-to-timed-inclusive',
    area: 'filters',
    bug: 'a timed to-do matches `due_at <= dueTo.instant`, so a deadline at the next midnight counts in',
    caughtBy: 'to-do due windows (all-day days and timed instants)',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['todos'], (base) => ({
        list: (companyId, filter, window) => {
          const dueTo = filter.dueTo as { day: string; instant: Date } | undefined
          return base.list(companyId, dueTo === undefined ? filter : { ...filter, dueTo: { ...dueTo, instant: new Date(dueTo.instant.getTime() + 1) } }, window)
        },
      })),
    }),
  },
  {
    name: 'all-day-compared-by-instant',
    area: 'time zones',
    bug: 'all-day to-dos are compared as `new Date(due_day)` (UTC midnight) against the instant bounds, not by day',
    caughtBy: 'to-do due windows (all-day days and timed instants)',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['todos'], (base) => ({
        async list(companyId, filter, window) {
          const dueFrom = filter.dueFrom as { day: string; instant: Date } | undefined
          const dueTo = filter.dueTo as { day: string; instant: Date } | undefined
          if (dueFrom === undefined && dueTo === undefined) return base.list(companyId, filter, window)
          const matching = new Set((await everything(base, companyId, filter)).map((row) => row.id))
          const rows = (await everything(base, companyId, without(filter, 'dueFrom', 'dueTo'))).filter((row) => {
            if (row.due_is_all_day !== true) return matching.has(row.id)
            if (row.due_day === null) return false
            const at = new Date(String(row.due_day)).getTime()
            return (dueFrom === undefined || at >= dueFrom.instant.getTime()) && (dueTo === undefined || at < dueTo.instant.getTime())
          })
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'no-due-date-matches',
    area: 'filters',
    bug: '`due_at >= ? OR due_at IS NULL`: to-dos without a due date match every due window',
    caughtBy: 'to-do due windows (all-day days and timed instants)',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['todos'], (base) => ({
        async list(companyId, filter, window) {
          if (filter.dueFrom === undefined && filter.dueTo === undefined) return base.list(companyId, filter, window)
          const matching = new Set((await everything(base, companyId, filter)).map((row) => row.id))
          const rows = (await everything(base, companyId, without(filter, 'dueFrom', 'dueTo'))).filter(
            (row) => matching.has(row.id) || (row.due_day === null && row.due_at === null),
          )
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },

  // Days and instants through the process time zone
  {
    name: 'day-read-through-local-midnight',
    area: 'time zones',
    bug: 'a `date` column comes back as a local-midnight `Date` and is turned into a day with `toISOString().slice(0, 10)`: right in UTC and west of it, a day early east of it',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({
      storage: mapFields(storage, 'days', (value) => (typeof value === 'string' ? localMidnight(value).toISOString().slice(0, 10) : value)),
    }),
  },
  {
    name: 'day-read-with-local-getters',
    area: 'time zones',
    bug: 'a day is parsed with `new Date(day)` (UTC midnight) and printed with `getFullYear/getMonth/getDate`: right in UTC and east of it, a day early west of it',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({
      storage: mapFields(storage, 'days', (value) => {
        if (typeof value !== 'string') return value
        const date = new Date(value)
        return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`
      }),
    }),
  },
  {
    name: 'instant-text-without-zone',
    area: 'time zones',
    bug: "instants are stored as text without the `Z` (`2026-03-29 22:00:00.000`) and parsed back with `new Date(text)`, which reads them as local time",
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({
      storage: mapFields(storage, 'instants', (value) => (value instanceof Date ? new Date(value.toISOString().replace('T', ' ').replace('Z', '')) : value)),
    }),
  },

  // Money
  {
    name: 'money-as-float-euros',
    area: 'money',
    bug: 'amounts are kept in a REAL column as euros and read back as `euros * 100` without rounding',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['expenses'], mapped((record) => ({ ...record, amount_cents: (Number(record.amount_cents) / 100) * 100 }))),
    }),
  },
  {
    name: 'money-int8-as-string',
    area: 'money',
    bug: 'a `bigint` amount comes back as the driver gives it: a string',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({ storage: withReaders(storage, ['expenses'], mapped((record) => ({ ...record, amount_cents: String(record.amount_cents) }))) }),
  },
  {
    name: 'money-int32',
    area: 'money',
    bug: 'amounts are kept in a 32-bit integer column: large amounts wrap',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({ storage: withReaders(storage, ['expenses'], mapped((record) => ({ ...record, amount_cents: Number(record.amount_cents) | 0 }))) }),
  },

  // Values at the boundary
  {
    name: 'instants-lose-milliseconds',
    area: 'values',
    bug: 'a `timestamp(0)` column: instants lose their milliseconds',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({ storage: mapFields(storage, 'instants', (value) => (value instanceof Date ? new Date(Math.floor(value.getTime() / 1000) * 1000) : value)) }),
  },
  {
    name: 'booleans-as-integers',
    area: 'values',
    bug: 'SQLite booleans come back as 0 and 1',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({ storage: mapFields(storage, 'booleans', (value) => (typeof value === 'boolean' ? Number(value) : value)) }),
  },
  {
    name: 'empty-text-as-null',
    area: 'values',
    bug: "an empty string is stored as NULL (`value || null`)",
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({ storage: mapFields(storage, 'texts', (value) => (value === '' ? null : value)) }),
  },
  {
    name: 'json-array-sorted-as-text',
    area: 'values',
    bug: 'tag ids come from a child table without an order column, sorted as text',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['todos'], mapped((record) => ({ ...record, tag_ids: [...(record.tag_ids as number[])].sort() }))),
    }),
  },
  {
    name: 'references-as-strings',
    area: 'values',
    bug: '`int8` references come back as strings (`"40"`)',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({ storage: withReaders(storage, ['shifts'], mapped((record) => ({ ...record, employee_id: String(record.employee_id) }))) }),
  },
  {
    name: 'text-through-latin1',
    area: 'values',
    bug: 'text goes through a latin1 column: characters outside it become `?`',
    caughtBy: 'value fidelity',
    break: ({ storage }) => ({
      storage: mapFields(storage, 'texts', (value) => (typeof value === 'string' ? value.replace(/[^\u0000-\u00ff]/gu, '?') : value)),
    }),
  },

  // Record shape
  {
    name: 'leaks-company-id',
    area: 'tenant isolation',
    bug: '`SELECT *` with a spread: every record carries `company_id`',
    caughtBy: 'record shape (no private or extra fields)',
    break: ({ storage }, adapter) => ({
      storage: withReaders(storage, ['shifts'], mapped((record) => ({ ...record, company_id: adapter.storage.data.shifts.find((row) => row.id === record.id)?.company_id }))),
    }),
  },
  {
    name: 'leaks-salary',
    area: 'tenant isolation',
    bug: 'employees are read with `SELECT *`: salary and IBAN leave storage',
    caughtBy: 'record shape (no private or extra fields)',
    break: ({ storage }, adapter) => ({
      storage: withReaders(
        storage,
        ['employees'],
        mapped((record) => {
          const row = adapter.storage.data.employees.find((candidate) => candidate.id === record.id)
          return { ...record, salary_cents: row?.salary_cents, iban: row?.iban }
        }),
      ),
    }),
  },
  {
    name: 'null-left-out',
    area: 'values',
    bug: 'nullable fields that are NULL are left out of the record instead of being `null`',
    caughtBy: 'record shape (no private or extra fields)',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['employees'], mapped((record) => Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null)) as AnyRecord)),
    }),
  },

  // Tenant isolation
  {
    name: 'get-without-company',
    area: 'tenant isolation',
    bug: '`get` runs `WHERE id = ?` without the company: one tenant reads another\'s row',
    caughtBy: 'tenant isolation',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['projects'], (base) => ({
        async get(companyId, id) {
          for (const company of [companyId, 1, 2]) {
            const record = await base.get(company, id)
            if (record !== null) return record
          }
          return null
        },
      })),
    }),
  },
  {
    name: 'email-filter-across-companies',
    area: 'tenant isolation',
    bug: 'the email lookup searches every company\'s users (the email index has no company column)',
    caughtBy: 'tenant isolation',
    break: ({ storage }) => ({
      storage: withReaders(storage, ['users'], (base) => ({
        async list(companyId, filter, window) {
          if (typeof filter.email !== 'string') return base.list(companyId, filter, window)
          const seen = new Map<number, AnyRecord>()
          for (const company of [companyId, 1, 2]) for (const row of await everything(base, company, filter)) if (!seen.has(row.id)) seen.set(row.id, row)
          const rows = [...seen.values()].sort((a, b) => a.id - b.id)
          return { rows: rows.slice(window.offset, window.offset + window.limit), total: rows.length }
        },
      })),
    }),
  },
  {
    name: 'pending-member-read-from-account',
    area: 'tenant isolation',
    bug: 'a pending member is read by joining the account by email: the inviting company sees the person\'s own names, email and login',
    caughtBy: 'tenant isolation',
    break: ({ storage }, adapter) => ({
      storage: withReaders(
        storage,
        ['users'],
        mapped((record) => {
          if (record.invitation_status !== 'pending') return record
          // Issue 21: a pending user has no person; the bug joins one by the email it names.
          const person = adapter.storage.data.people.find((candidate) => candidate.email.toLowerCase() === String(record.email).toLowerCase())
          return person === undefined ? record : { ...record, email: person.email, first_name: person.first_name, last_name: person.last_name, active: person.active }
        }),
      ),
    }),
  },
  {
    name: 'company-ignores-id',
    area: 'tenant isolation',
    bug: '`company()` returns the first company row (`LIMIT 1` without `WHERE id = ?`)',
    caughtBy: 'lookup by id',
    break: ({ storage }) => ({ storage: override(storage, { company: () => storage.company(1) }) }),
  },
]
