import { randomUUID } from 'node:crypto'
import type { components, operations } from './api-types.js'
import { dataOf, type WorkforceClient } from './client.js'

export type Todo = components['schemas']['Todo']
export type NewTodo = operations['createTodo']['requestBody']['content']['application/json']
export type TodoChange = operations['updateTodo']['requestBody']['content']['application/json']

export interface WriteOptions {
  /**
   * Names this one change. Default: a new UUID. The client's retries all reuse it; pass your
   * own to make a retry of the whole call (after a crash, say) safe too.
   */
  idempotencyKey?: string
}

export interface WriteResult<T> {
  record: T
  idempotencyKey: string
  /** The API answered with the stored response of an earlier attempt (`Idempotent-Replay: true`). */
  replayed: boolean
}

/**
 * `POST /v1/todos` with an `Idempotency-Key`, so a retry after a lost response does not make a
 * second to-do (docs/api.md 5).
 *
 * @example
 * const { record } = await createTodo(api, { title: 'Check the crane', list_id: 1, assigned_to: 1 })
 */
export async function createTodo(api: WorkforceClient, todo: NewTodo, options: WriteOptions = {}): Promise<WriteResult<Todo>> {
  const idempotencyKey = options.idempotencyKey ?? randomUUID()
  const result = await api.POST('/v1/todos', { params: { header: { 'Idempotency-Key': idempotencyKey } }, body: todo })
  return { record: dataOf(result, 'POST /v1/todos').data, idempotencyKey, replayed: isReplay(result.response) }
}

/**
 * `PATCH /v1/todos/{id}` with an `Idempotency-Key`. Only the fields given are written; `null`
 * clears `notes` or `due_date`.
 *
 * @example
 * await updateTodo(api, 41, { status: 'done' })
 */
export async function updateTodo(api: WorkforceClient, id: number, change: TodoChange, options: WriteOptions = {}): Promise<WriteResult<Todo>> {
  const idempotencyKey = options.idempotencyKey ?? randomUUID()
  const result = await api.PATCH('/v1/todos/{id}', { params: { path: { id }, header: { 'Idempotency-Key': idempotencyKey } }, body: change })
  return { record: dataOf(result, `PATCH /v1/todos/${id}`).data, idempotencyKey, replayed: isReplay(result.response) }
}

function isReplay(response: Response): boolean {
  return response.headers.get('idempotent-replay') === 'true'
}
