import { Type } from '@sinclair/typebox'
import { Day, Id, Nullable, StringEnum, Timestamp, timestamp } from './wire.js'
import type { ShiftFilter } from '../ports/storage.js'
import { SHIFT_STATUSES, type ShiftRecord } from '../ports/records.js'
import { readOnlyResource, type ReadResource } from './read-routes.js'
import { checkDayRange, companyDayWindow, updatedSince } from './filters.js'

/** Structural data only: free text and billing internals are never exposed. */
export const Shift = Type.Object({
  id: Id,
  employee_id: Id,
  project_id: Nullable(Id),
  status: StringEnum(SHIFT_STATUSES),
  starts_at: Timestamp,
  ends_at: Timestamp,
  break_minutes: Type.Integer(),
  created_at: Timestamp,
  updated_at: Timestamp,
})

const filters = {
  employee_id: Type.Optional(Id),
  project_id: Type.Optional(Id),
  status: Type.Optional(StringEnum(SHIFT_STATUSES)),
  date_from: Type.Optional(Day),
  date_to: Type.Optional(Day),
  updated_since: Type.Optional(Timestamp),
}

export function renderShift(shift: ShiftRecord) {
  return {
    id: shift.id,
    employee_id: shift.employee_id,
    project_id: shift.project_id,
    status: shift.status,
    starts_at: timestamp(shift.starts_at),
    ends_at: timestamp(shift.ends_at),
    break_minutes: shift.break_minutes,
    created_at: timestamp(shift.created_at),
    updated_at: timestamp(shift.updated_at),
  }
}

const readShifts: ReadResource<ShiftRecord, ShiftFilter, typeof filters, typeof Shift> = {
  name: 'shifts',
  singular: 'shift',
  scope: 'shifts:read',
  item: Shift,
  filters,
  reader: (storage) => storage.shifts,
  async toFilter(query, context) {
    checkDayRange('date_from', query.date_from, 'date_to', query.date_to)
    const filter: ShiftFilter = {
      employeeId: query.employee_id,
      projectId: query.project_id,
      status: query.status,
      updatedSince: updatedSince(query.updated_since),
    }
    // A shift belongs to the company-calendar day on which it starts (spec 4.3).
    const { start, end } = await companyDayWindow(query.date_from, query.date_to, context)
    if (start !== undefined) filter.startsFrom = start
    if (end !== undefined) filter.startsBefore = end
    return filter
  },
  render: renderShift,
}

export const shifts = readOnlyResource(readShifts)
