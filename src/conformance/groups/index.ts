import type { ConformanceGroup } from '../group.js'
import { auditTrail } from './audit-trail.js'
import { changeEvents } from './change-events.js'
import { dayWindows } from './day-windows.js'
import { equalityFilters } from './equality-filters.js'
import { eventFeed } from './event-feed.js'
import { httpParity } from './http-parity.js'
import { idempotencyGroup } from './idempotency.js'
import { keyStoreGroup } from './key-store.js'
import { keyUsage } from './key-usage.js'
import { keysetWalks } from './keyset-walks.js'
import { listSeek } from './list-seek.js'
import { lookupById } from './lookup-by-id.js'
import { moduleRegistryGroup } from './module-registry.js'
import { orderingAndPaging } from './ordering-and-paging.js'
import { pendingMemberships } from './pending-memberships.js'
import { recordShape } from './record-shape.js'
import { shiftWindows } from './shift-windows.js'
import { tenantIsolation } from './tenant-isolation.js'
import { todoDueWindows } from './todo-due-windows.js'
import { updatedSinceFilter } from './updated-since.js'
import { valueFidelity } from './value-fidelity.js'
import { webhookDeliveries } from './webhook-deliveries.js'
import { webhookOutbox } from './webhook-outbox.js'
import { webhookReplay } from './webhook-replay.js'
import { webhookTestEvents } from './webhook-test-events.js'
import { writesGroup } from './writes.js'

/**
 * Every group, in the order they run. A new group (the outbox…) is one
 * file in this folder and one line here; if it needs an optional capability, it names it in
 * `requires` and the flag is added to `ConformanceSupports`.
 */
export const CONFORMANCE_GROUPS: readonly ConformanceGroup[] = [
  orderingAndPaging,
  lookupById,
  equalityFilters,
  updatedSinceFilter,
  dayWindows,
  shiftWindows,
  todoDueWindows,
  valueFidelity,
  recordShape,
  tenantIsolation,
  listSeek,
  keysetWalks,
  keyStoreGroup,
  moduleRegistryGroup,
  writesGroup,
  pendingMemberships,
  changeEvents,
  idempotencyGroup,
  webhookOutbox,
  webhookDeliveries,
  webhookTestEvents,
  webhookReplay,
  eventFeed,
  auditTrail,
  keyUsage,
  httpParity,
]
