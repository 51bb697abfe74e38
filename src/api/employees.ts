import { Type } from '@sinclair/typebox'
import { Day, Id, Nullable, StringEnum, Timestamp, timestamp } from './wire.js'
import type { EmployeeFilter } from '../ports/storage.js'
import { CONTRACT_TYPES, type EmployeeRecord } from '../ports/records.js'
import { readOnlyResource, type ReadResource } from './read-routes.js'
import { updatedSince } from './filters.js'

/** The HR profile. Salary, bank data, documents and photos are deliberately never exposed. */
export const Employee = Type.Object({
  id: Id,
  user_id: Nullable(Id),
  employee_number: Type.String(),
  job_title: Nullable(Type.String()),
  contract_type: StringEnum(CONTRACT_TYPES),
  weekly_hours: Type.Number(),
  hire_date: Day,
  termination_date: Nullable(Day),
  supervisor_id: Nullable(Id),
  created_at: Timestamp,
  updated_at: Timestamp,
})

const filters = {
  updated_since: Type.Optional(Timestamp),
}

export function renderEmployee(employee: EmployeeRecord) {
  return {
    id: employee.id,
    user_id: employee.user_id,
    employee_number: employee.employee_number,
    job_title: employee.job_title,
    contract_type: employee.contract_type,
    weekly_hours: employee.weekly_hours,
    hire_date: employee.hire_date,
    termination_date: employee.termination_date,
    supervisor_id: employee.supervisor_id,
    created_at: timestamp(employee.created_at),
    updated_at: timestamp(employee.updated_at),
  }
}

const readEmployees: ReadResource<EmployeeRecord, EmployeeFilter, typeof filters, typeof Employee> = {
  name: 'employees',
  singular: 'employee',
  scope: 'employees:read',
  item: Employee,
  filters,
  reader: (storage) => storage.employees,
  toFilter: (query) => ({ updatedSince: updatedSince(query.updated_since) }),
  render: renderEmployee,
}

export const employees = readOnlyResource(readEmployees)
