import { Type } from '@sinclair/typebox'
import { Day, Id, StringEnum, Timestamp, timestamp } from './wire.js'
import type { AbsenceFilter } from '../ports/storage.js'
import { ABSENCE_STATUSES, ABSENCE_TYPES, type AbsenceRecord } from '../ports/records.js'
import { readOnlyResource, type ReadResource } from './read-routes.js'
import { checkDayRange, updatedSince } from './filters.js'

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
  date_from: Type.Optional(Day),
  date_to: Type.Optional(Day),
  updated_since: Type.Optional(Timestamp),
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

const readAbsences: ReadResource<AbsenceRecord, AbsenceFilter, typeof filters, typeof Absence> = {
  name: 'absences',
  singular: 'absence',
  scope: 'absences:read',
  item: Absence,
  filters,
  reader: (storage) => storage.absences,
  toFilter(query) {
    checkDayRange('date_from', query.date_from, 'date_to', query.date_to)
    return {
      employeeId: query.employee_id,
      status: query.status,
      dateFrom: query.date_from,
      dateTo: query.date_to,
      updatedSince: updatedSince(query.updated_since),
    }
  },
  render: renderAbsence,
}

export const absences = readOnlyResource(readAbsences)
