import { Type } from '@sinclair/typebox'
import { Id, Nullable, StringEnum, Timestamp, timestamp } from './wire.js'
import type { ShiftFilter } from '../ports/storage.js'
import { SHIFT_STATUSES, type ShiftRecord } from '../ports/records.js'
import { defineResource, exactKeys, EVENT_ACTIONS } from './resource.js'
import { companyDayWindow, DAY_RANGE, UPDATED_SINCE, updatedSince } from './filters.js'

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
  ...DAY_RANGE,
  ...UPDATED_SINCE,
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

export const shifts = defineResource({
  name: 'shifts',
  singular: 'shift',
  component: 'Shift',
  module: 'projects',
  scope: 'shifts:read',
  item: Shift,
  render: renderShift,
  list: {
    filters,
    reader: (storage) => storage.shifts,
    async toFilter(query, context): Promise<ShiftFilter> {
      // A shift belongs to the company-calendar day on which it starts (spec 4.3).
      const { start, end } = await companyDayWindow(context, 'date_from', query.date_from, 'date_to', query.date_to)
      return {
        employeeId: query.employee_id,
        projectId: query.project_id,
        status: query.status,
        updatedSince: updatedSince(query.updated_since),
        ...(start === undefined ? {} : { startsFrom: start }),
        ...(end === undefined ? {} : { startsBefore: end }),
      }
    },
  },
  events: { actions: EVENT_ACTIONS, position: 3 },
  conformance: {
    recordKeys: exactKeys<ShiftRecord>()([
      'id', 'employee_id', 'project_id', 'status', 'starts_at', 'ends_at', 'break_minutes', 'created_at', 'updated_at',
    ]),
    filterKeys: exactKeys<ShiftFilter>()(['employeeId', 'projectId', 'status', 'startsFrom', 'startsBefore', 'updatedSince']),
    fieldKinds: {
      instants: ['starts_at', 'ends_at', 'created_at', 'updated_at'],
      days: [],
      integers: ['id', 'employee_id', 'project_id', 'break_minutes'],
      booleans: [],
      structures: [],
      texts: ['status'],
      fractions: [],
    },
  },
  docs: {
    description: 'Planned and worked shifts of your employees.',
    fields: {
      starts_at: 'Start instant. The shift belongs to the company-calendar day on which it starts.',
      ends_at: 'End instant.',
      break_minutes: 'Unpaid break within the shift.',
    },
    list: 'A shift belongs to the company-calendar day on which it starts.',
    examples: (seed) => {
      const shift = seed.first(seed.data.shifts)
      const day = shift.starts_at.toISOString().slice(0, 10)
      return {
        listShifts: { method: 'GET', path: '/v1/shifts', query: { per_page: 2, date_from: day, date_to: day } },
        getShift: { method: 'GET', path: `/v1/shifts/${shift.id}` },
      }
    },
  },
})
