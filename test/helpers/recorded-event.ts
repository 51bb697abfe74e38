import { expect } from 'vitest'

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * A change event as the outbox must hold it: a fresh `evt_` id and the payload rendered in the
 * transaction. With `data` (the resource as GET returns it), the payload's bytes must end with
 * exactly that rendering (and `previousAttributes`, an update's `previous_attributes`, when given);
 * without it, its `data` must at least be the resource with that id.
 */
export function recordedEvent(type: string, companyId: number, resourceId: number, at: Date, data?: unknown, previousAttributes?: Record<string, unknown>) {
  const head = `^\\{"id":"evt_[a-z2-7]{24}",`
  const fields = `"type":${JSON.stringify(type)},"created_at":${JSON.stringify(at.toISOString())},"company_id":${companyId},"data":`
  const changes = previousAttributes === undefined ? '' : `,"previous_attributes":${JSON.stringify(previousAttributes)}`
  const rest = data === undefined ? escape(`${fields}{"id":${resourceId},`) : `${escape(`${fields}${JSON.stringify(data)}${changes}}`)}$`
  return {
    id: expect.stringMatching(/^evt_[a-z2-7]{24}$/),
    company_id: companyId,
    type,
    resource_id: resourceId,
    occurred_at: at,
    payload: expect.stringMatching(new RegExp(`${head}${rest}`)),
  }
}
