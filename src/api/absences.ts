import { Type } from '@sinclair/typebox'
import { Day, Id, StringEnum, Timestamp, timestamp } from './wire.js'
import type { AbsenceFilter } from '../ports/storage.js'
import { ABSENCE_STATUSES, ABSENCE_TYPES, type AbsenceRecord } from '../ports/records.js'
import { defineResource, exactKeys, EVENT_ACTIONS } from './resource.js'
import { DAY_RANGE, dayRange, UPDATED_SINCE, updatedSince } from './filters.js'

/** A leave request. Free-text notes, reasons and attachments are never exposed. */
export const Absence = Type.Object({
  id: Id,
  employee_id: Id,
  date: Day,
  type: StringEnum(ABSENCE_TYPES),
  hours: Type.Number(),
  status: StringEnum(ABSENCE_STATUSES),
  created_at: Timestamp,
  updated_at: Timestamp,
})

const filters = {
  employee_id: Type.Optional(Id),
  status: Type.Optional(StringEnum(ABSENCE_STATUSES)),
  ...DAY_RANGE,
  ...UPDATED_SINCE,
}

export function renderAbsence(absence: AbsenceRecord) {
  return {
    id: absence.id,
    employee_id: absence.employee_id,
    date: absence.date,
    type: absence.type,
    hours: absence.hours,
    status: absence.status,
    created_at: timestamp(absence.created_at),
    updated_at: timestamp(absence.updated_at),
  }
}

export const absences = defineResource({
  name: 'absences',
  singular: 'absence',
  component: 'Absence',
  module: 'projects',
  scope: 'absences:read',
  item: Absence,
  render: renderAbsence,
  list: {
    filters,
    reader: (storage) => storage.absences,
    toFilter: (query) => ({ employeeId: query.employee_id, status: query.status, ...dayRange(query), updatedSince: updatedSince(query.updated_since) }),
  },
  events: { actions: EVENT_ACTIONS, position: 5 },
  conformance: {
    recordKeys: exactKeys<AbsenceRecord>()(['id', 'employee_id', 'date', 'type', 'hours', 'status', 'created_at', 'updated_at']),
    filterKeys: exactKeys<AbsenceFilter>()(['employeeId', 'status', 'dateFrom', 'dateTo', 'updatedSince']),
    fieldKinds: {
      instants: ['created_at', 'updated_at'],
      days: ['date'],
      integers: ['id', 'employee_id'],
      booleans: [],
      structures: [],
      texts: ['type', 'status'],
      fractions: ['hours'],
    },
  },
  docs: {
    description: 'Leave and absences of your employees.',
    fields: { date: 'The day of the absence, as entered, in every time zone.', hours: 'Hours absent that day.' },
    list: 'An absence is one day (`date`), the day as entered in every time zone.',
    examples: (seed) => ({
      listAbsences: { method: 'GET', path: '/v1/absences', query: { per_page: 2 } },
      getAbsence: { method: 'GET', path: `/v1/absences/${seed.first(seed.data.absences).id}` },
    }),
  },
})
