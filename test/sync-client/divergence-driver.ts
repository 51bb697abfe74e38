import type { FastifyInstance } from 'fastify'
import { CompiledQuery, type Kysely } from 'kysely'
import type { SqlCodec } from '../../adapters/sql/codec.js'
import type { QueryDb, SqlRunner } from '../../adapters/sql/prepared.js'
import { SqlStorage } from '../../adapters/sql/sql-storage.js'
import { mulberry32 } from '../../src/seed/prng.js'

/**
 * The other side of the divergence test: a seeded, reproducible stream of creates, updates and
 * deletes of every resource that has events, made the two ways a deployment makes them. To-dos
 * and users change through the API (and the host's invitation calls); employees, projects,
 * shifts, absences, expenses and the company change in the host's own Kysely transactions,
 * each publishing its event with `app.workforceApi.events.publish(trx, …)` and the record read
 * back inside that transaction. Some of those transactions stay open while others commit, and
 * some roll back after publishing: neither may show in a copy kept from the feed.
 */

/** One app instance the driver writes through; the Postgres test has two on one database. */
export interface DriverInstance {
  app: FastifyInstance
  /** `http://127.0.0.1:<port>/api/public`. */
  baseUrl: string
  /** Runs `work` in a host transaction on the instance's database (what a host's own screen does). */
  transact<T>(work: (trx: Kysely<any>) => Promise<T>): Promise<T>
  codec: SqlCodec
}

export interface DriverOptions {
  seed: number
  instances: readonly DriverInstance[]
  /** Keys with every scope, by company: company 2's changes must never reach company 1's copy. */
  keys: Readonly<Record<number, string>>
  /** Operations at least. */
  operations: number
  /** Operations in flight at once. */
  concurrency: number
  /** The longest a host transaction stays open after publishing (ms). */
  maxHoldMs: number
  /** Share of host transactions that roll back after publishing. */
  rollbackRate: number
  /** The longest pause a worker takes between two operations (ms): the changes then spread over many sync passes. */
  maxGapMs: number
  /** Asked once `operations` have been tried: more operations while it answers true (until the client has made enough passes, say). */
  keepGoing?: () => boolean
}

export interface DriverReport {
  /** Operations that changed data, by kind (`shifts.update`). */
  applied: Record<string, number>
  /** Host transactions that published, then rolled back. */
  rolledBack: number
  /** Host transactions held open after publishing while others went on. */
  held: number
  /** Operations that found nothing to change (no free record, a refused status move). */
  skipped: number
}

/** The host-written resources and their tables (adapters/sql/tables/*). */
const HOST_TABLES = {
  employees: 'wfa_employees',
  projects: 'wfa_projects',
  shifts: 'wfa_shifts',
  absences: 'wfa_absences',
  expenses: 'wfa_expenses',
} as const
export type HostResource = keyof typeof HOST_TABLES
const HOST_RESOURCES = Object.keys(HOST_TABLES) as HostResource[]

/** A `Storage` whose reads run in `trx`: the record as the resource's reader returns it, uncommitted changes included. */
function storageIn(trx: Kysely<any>, codec: SqlCodec): SqlStorage {
  const runner: SqlRunner = {
    all: async (query, values) => (await trx.executeQuery(CompiledQuery.raw(query.sql, values))).rows as Record<string, unknown>[],
  }
  return new SqlStorage(trx as QueryDb, runner, codec)
}

class RolledBack extends Error {}

/** One operation's own random draws: its choices do not depend on how the operations in flight interleave. */
interface Draws {
  random(): number
  pick<T>(items: readonly T[]): T
  chance(p: number): boolean
}

function drawsOf(seed: number): Draws {
  const random = mulberry32(seed)
  return {
    random,
    pick: <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T,
    chance: (p: number) => random() < p,
  }
}

type Op = (r: Draws) => Promise<'done' | 'skipped' | 'rolled back'>

/**
 * Runs the seeded operations until `options.operations` have been tried (and on while
 * `keepGoing` says so). The seed fixes the sequence of operation kinds and pauses, and each
 * operation's own choices (instance, company, which free record, new values, hold, rollback);
 * with several in flight, timing decides which records are free and the commit order.
 */
export async function runDriver(options: DriverOptions): Promise<DriverReport> {
  // The sequence of operation kinds and gaps; each operation then draws from a stream of its own.
  const { random } = drawsOf(options.seed)
  const report: DriverReport = { applied: {}, rolledBack: 0, held: 0, skipped: 0 }
  const count = (what: string) => (report.applied[what] = (report.applied[what] ?? 0) + 1)

  // What exists, by company and resource, as the driver's committed changes left it.
  const live = new Map<string, number[]>()
  const liveOf = (companyId: number, resource: string) => {
    const key = `${companyId}:${resource}`
    let ids = live.get(key)
    if (ids === undefined) live.set(key, (ids = []))
    return ids
  }
  const first = options.instances[0] as DriverInstance
  for (const companyId of [1, 2]) {
    for (const resource of [...HOST_RESOURCES, 'todos'] as const) {
      const table = resource === 'todos' ? 'wfa_todos' : HOST_TABLES[resource]
      const rows = await first.transact((trx) => trx.selectFrom(table).select('id').where('company_id', '=', companyId).orderBy('id').execute())
      liveOf(companyId, resource).push(...rows.map((row) => first.codec.readInt(row.id)))
    }
  }
  const pendingUsers = new Map<number, number[]>([
    [1, []],
    [2, []],
  ])
  const acceptedUsers = new Map<number, number[]>([
    [1, []],
    [2, []],
  ])
  // One change at a time per record: two writers of one row would wait on each other's lock,
  // and the order of their stamps would then be the driver's timing, not the data's.
  const busy = new Set<string>()
  const claim = (r: Draws, ids: readonly number[], key: (id: number) => string): number | null => {
    const free = ids.filter((id) => !busy.has(key(id)))
    if (free.length === 0) return null
    const id = r.pick(free)
    busy.add(key(id))
    return id
  }
  /**
   * Runs `work` on a live record of `resource` in a drawn company, through a drawn instance,
   * holding the record (`busy`) until it ends; 'skipped' when none is free.
   */
  const onLiveRecord = async (
    r: Draws,
    resource: HostResource | 'todos',
    work: (instance: DriverInstance, companyId: number, id: number) => Promise<'done' | 'skipped' | 'rolled back'>,
  ): Promise<'done' | 'skipped' | 'rolled back'> => {
    const instance = r.pick(options.instances)
    const companyId = r.chance(0.85) ? 1 : 2
    const key = (id: number) => `${companyId}:${resource}:${id}`
    const id = claim(r, liveOf(companyId, resource), key)
    if (id === null) return 'skipped'
    try {
      return await work(instance, companyId, id)
    } finally {
      busy.delete(key(id))
    }
  }
  let lastStamp = 0
  const stamp = () => new Date((lastStamp = Math.max(Date.now(), lastStamp + 1)))

  /** A write through the API; `refusable` statuses (a transition the workflow forbids, say) come back as null: nothing changed. */
  const api = async (instance: DriverInstance, companyId: number, method: 'POST' | 'PATCH', path: string, body: unknown, refusable: readonly number[] = []) => {
    const response = await fetch(`${instance.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${options.keys[companyId]}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    if (refusable.includes(response.status)) return null
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`)
    return (JSON.parse(text) as { data: { id: number } }).data
  }
  const created = async (...args: Parameters<typeof api>) => (await api(...args)) as { id: number }

  /** A host transaction: `change` writes and publishes; then it is held open a while, and maybe rolled back. */
  const hostTransaction = async (r: Draws, instance: DriverInstance, change: (trx: Kysely<any>) => Promise<() => void>): Promise<'done' | 'rolled back'> => {
    const hold = r.chance(0.5) ? Math.floor(r.random() * options.maxHoldMs) : 0
    const rollback = r.chance(options.rollbackRate)
    let committed: (() => void) | undefined
    try {
      await instance.transact(async (trx) => {
        const after = await change(trx)
        if (hold > 0) {
          report.held += 1
          await new Promise((resolve) => setTimeout(resolve, hold))
        }
        if (rollback) throw new RolledBack()
        committed = after
      })
    } catch (error) {
      if (error instanceof RolledBack) return 'rolled back'
      throw error
    }
    committed?.()
    return 'done'
  }

  const hostCreate =
    (resource: HostResource): Op =>
    // The record copied is held meanwhile: a deletion of it would leave nothing to copy.
    (r) =>
      onLiveRecord(r, resource, async (instance, companyId, source) => {
        const marker = Math.floor(r.random() * 1e6)
        return hostTransaction(r, instance, async (trx) => {
          const table = HOST_TABLES[resource]
          const row = (await trx.selectFrom(table).selectAll().where('id', '=', source).executeTakeFirstOrThrow()) as Record<string, unknown>
          const now = instance.codec.instant(stamp())
          const { id: _id, ...copied } = row
          Object.assign(copied, visibleChange(resource, marker, instance.codec), { created_at: now, updated_at: now })
          const inserted = await trx.insertInto(table).values(copied).returning('id').executeTakeFirstOrThrow()
          const id = instance.codec.readInt(inserted.id)
          const record = await storageIn(trx, instance.codec)[resource].get(companyId, id)
          await instance.app.workforceApi.events.publish(trx, { type: `${resource}.created`, companyId, record } as never)
          return () => liveOf(companyId, resource).push(id)
        })
      })

  const hostUpdate =
    (resource: HostResource): Op =>
    (r) =>
      onLiveRecord(r, resource, async (instance, companyId, id) => {
        const marker = Math.floor(r.random() * 1e6)
        return hostTransaction(r, instance, async (trx) => {
          const storage = storageIn(trx, instance.codec)
          const previous = await storage[resource].get(companyId, id)
          await trx
            .updateTable(HOST_TABLES[resource])
            .set({ ...visibleChange(resource, marker, instance.codec), updated_at: instance.codec.instant(stamp()) })
            .where('company_id', '=', companyId)
            .where('id', '=', id)
            .execute()
          const record = await storage[resource].get(companyId, id)
          await instance.app.workforceApi.events.publish(trx, { type: `${resource}.updated`, companyId, record, previous } as never)
          return () => {}
        })
      })

  const hostDelete =
    (resource: HostResource | 'todos'): Op =>
    (r) =>
      onLiveRecord(r, resource, (instance, companyId, id) =>
        hostTransaction(r, instance, async (trx) => {
          await deleteInHost(trx, instance, resource, companyId, id)
          return () => {
            const ids = liveOf(companyId, resource)
            ids.splice(ids.indexOf(id), 1)
          }
        }),
      )

  const companyUpdate: Op = async (r) => {
    const instance = r.pick(options.instances)
    const companyId = r.chance(0.85) ? 1 : 2
    const key = `company:${companyId}`
    if (busy.has(key)) return 'skipped'
    busy.add(key)
    const name = `Company ${companyId} renamed ${Math.floor(r.random() * 1e6)}`
    try {
      return await hostTransaction(r, instance, async (trx) => {
        const storage = storageIn(trx, instance.codec)
        const previous = await storage.company(companyId)
        await trx.updateTable('wfa_companies').set({ name, updated_at: instance.codec.instant(stamp()) }).where('id', '=', companyId).execute()
        const record = await storage.company(companyId)
        await instance.app.workforceApi.events.publish(trx, { type: 'company.updated', companyId, record, previous } as never)
        return () => {}
      })
    } finally {
      busy.delete(key)
    }
  }

  const todoCreate: Op = async (r) => {
    const instance = r.pick(options.instances)
    const companyId = r.chance(0.85) ? 1 : 2
    const title = `Driver to-do ${Math.floor(r.random() * 1e6)}`
    const todo = await created(instance, companyId, 'POST', '/v1/todos', { title, ...(await todoRefsOf(instance, companyId)) })
    liveOf(companyId, 'todos').push(todo.id)
    return 'done'
  }

  const todoUpdate: Op = (r) =>
    onLiveRecord(r, 'todos', async (instance, companyId, id) => {
      const body = r.chance(0.5) ? { title: `Renamed ${Math.floor(r.random() * 1e6)}` } : { status: r.pick(['open', 'done', 'waiting', 'cancelled'] as const) }
      // Some status moves are refused (a cancelled to-do only reopens): a 422 changes nothing.
      return (await api(instance, companyId, 'PATCH', `/v1/todos/${id}`, body, [422])) === null ? 'skipped' : 'done'
    })

  let invited = 0
  const userInvite: Op = async (r) => {
    const instance = r.pick(options.instances)
    const companyId = r.chance(0.85) ? 1 : 2
    invited += 1
    const email = `divergence.${options.seed}.${invited}.${Math.floor(r.random() * 1e6)}@example.com`
    const user = await created(instance, companyId, 'POST', '/v1/users', { email, first_name: 'Div', last_name: `Ergence ${invited}` })
    pendingUsers.get(companyId)?.push(user.id)
    return 'done'
  }

  const userAnswer =
    (answer: 'accept' | 'decline'): Op =>
    async (r) => {
      const instance = r.pick(options.instances)
      const companyId = r.chance(0.85) ? 1 : 2
      const pending = pendingUsers.get(companyId) as number[]
      const key = (id: number) => `${companyId}:users:${id}`
      const userId = claim(r, pending, key)
      if (userId === null) return 'skipped'
      try {
        if (answer === 'accept') await instance.app.workforceApi.invitations.accept({ companyId, userId })
        else await instance.app.workforceApi.invitations.decline({ companyId, userId })
        pending.splice(pending.indexOf(userId), 1)
        if (answer === 'accept') acceptedUsers.get(companyId)?.push(userId)
        return 'done'
      } finally {
        busy.delete(key(userId))
      }
    }

  const userLogin: Op = async (r) => {
    const instance = r.pick(options.instances)
    const companyId = r.chance(0.85) ? 1 : 2
    const key = (id: number) => `${companyId}:users:${id}`
    const userId = claim(r, acceptedUsers.get(companyId) as number[], key)
    if (userId === null) return 'skipped'
    try {
      // Driver-invited people belong to one company: their login is the company's to switch.
      await api(instance, companyId, 'POST', `/v1/users/${userId}/${r.chance(0.5) ? 'deactivate' : 'activate'}`, undefined)
      return 'done'
    } finally {
      busy.delete(key(userId))
    }
  }

  const weighted: Array<[number, string, Op]> = [
    [6, 'todos.create', todoCreate],
    [8, 'todos.update', todoUpdate],
    [4, 'todos.delete', hostDelete('todos')],
    [4, 'users.invite', userInvite],
    [3, 'users.accept', userAnswer('accept')],
    [2, 'users.decline', userAnswer('decline')],
    [2, 'users.login', userLogin],
    [2, 'company.update', companyUpdate],
    ...HOST_RESOURCES.flatMap((resource): Array<[number, string, Op]> => [
      [3, `${resource}.create`, hostCreate(resource)],
      [4, `${resource}.update`, hostUpdate(resource)],
      [3, `${resource}.delete`, hostDelete(resource)],
    ]),
  ]
  const totalWeight = weighted.reduce((sum, [weight]) => sum + weight, 0)
  const nextOp = (): [string, Op] => {
    let roll = random() * totalWeight
    for (const [weight, name, op] of weighted) {
      roll -= weight
      if (roll < 0) return [name, op]
    }
    const [, name, op] = weighted.at(-1) as [number, string, Op]
    return [name, op]
  }

  let started = 0
  const worker = async () => {
    while (started < options.operations || options.keepGoing?.() === true) {
      started += 1
      const [name, op] = nextOp()
      const gap = Math.floor(random() * options.maxGapMs)
      const draws = drawsOf(options.seed * 100_003 + started)
      if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap))
      const outcome = await op(draws)
      if (outcome === 'done') count(name)
      else if (outcome === 'rolled back') report.rolledBack += 1
      else report.skipped += 1
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, worker))
  return report
}

/**
 * Deletes a record in the host's transaction `trx` and publishes its `*.deleted` event there,
 * with the record as it was before (as a host's own screen would).
 */
export async function deleteInHost(trx: Kysely<any>, instance: DriverInstance, resource: HostResource | 'todos', companyId: number, id: number): Promise<void> {
  const before = await storageIn(trx, instance.codec)[resource].get(companyId, id)
  if (before === null) throw new Error(`${resource} ${id} of company ${companyId} does not exist`)
  await trx
    .deleteFrom(resource === 'todos' ? 'wfa_todos' : HOST_TABLES[resource])
    .where('company_id', '=', companyId)
    .where('id', '=', id)
    .execute()
  await instance.app.workforceApi.events.publish(trx, { type: `${resource}.deleted`, companyId, record: before } as never)
}

/** A change every reader of the record sees (not only `updated_at`), different each time. */
function visibleChange(resource: HostResource, marker: number, codec: SqlCodec): Record<string, unknown> {
  switch (resource) {
    case 'employees':
      return { job_title: `Driver job ${marker}` }
    case 'projects':
      return { name: `Driver project ${marker}` }
    case 'shifts':
      return { break_minutes: marker % 90 }
    case 'absences':
      return { date: codec.day(`2026-12-${String((marker % 28) + 1).padStart(2, '0')}`) }
    case 'expenses':
      return { description: `Driver expense ${marker}` }
  }
}

const todoRefs = new Map<string, { list_id: number; assigned_to: number }>()
/** A list and a member of the company for new to-dos (ids are per company: company 2's do not start at 1). */
async function todoRefsOf(instance: DriverInstance, companyId: number): Promise<{ list_id: number; assigned_to: number }> {
  const key = `${instance.baseUrl}|${companyId}`
  const known = todoRefs.get(key)
  if (known !== undefined) return known
  const refs = await instance.transact(async (trx) => {
    const list = await trx.selectFrom('wfa_todo_lists').select('id').where('company_id', '=', companyId).orderBy('id').limit(1).executeTakeFirstOrThrow()
    const member = await trx
      .selectFrom('wfa_memberships')
      .select('user_id')
      .where('company_id', '=', companyId)
      .where('invitation_status', '=', 'accepted')
      .orderBy('user_id')
      .limit(1)
      .executeTakeFirstOrThrow()
    return { list_id: instance.codec.readInt(list.id), assigned_to: instance.codec.readInt(member.user_id) }
  })
  todoRefs.set(key, refs)
  return refs
}
