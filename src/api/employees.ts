import { Type } from '@sinclair/typebox'
import { Day, Id, Nullable, StringEnum, Timestamp, timestamp } from './wire.js'
import type { EmployeeFilter } from '../ports/storage.js'
import { CONTRACT_TYPES, type EmployeeRecord } from '../ports/records.js'
import { defineResource, exactKeys, EVENT_ACTIONS } from './resource.js'
import { UPDATED_SINCE, updatedSince } from './filters.js'

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

const filters = { ...UPDATED_SINCE }

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

export const employees = defineResource({
  name: 'employees',
  singular: 'employee',
  component: 'Employee',
  module: 'core',
  scope: 'employees:read',
  item: Employee,
  render: renderEmployee,
  list: {
    filters,
    reader: (storage) => storage.employees,
    toFilter: (query) => ({ updatedSince: updatedSince(query.updated_since) }),
  },
  events: { actions: EVENT_ACTIONS, position: 4 },
  conformance: {
    recordKeys: exactKeys<EmployeeRecord>()([
      'id', 'user_id', 'employee_number', 'job_title', 'contract_type', 'weekly_hours', 'hire_date', 'termination_date',
      'supervisor_id', 'created_at', 'updated_at',
    ]),
    filterKeys: exactKeys<EmployeeFilter>()(['updatedSince']),
    fieldKinds: {
      instants: ['created_at', 'updated_at'],
      days: ['hire_date', 'termination_date'],
      integers: ['id', 'user_id', 'supervisor_id'],
      booleans: [],
      structures: [],
      texts: ['employee_number', 'job_title', 'contract_type'],
      fractions: ['weekly_hours'],
    },
  },
  docs: {
    description: 'Employment records: who works for your company, from when, with which contract.',
    fields: {
      user_id: 'The user this employment belongs to, if the employee has a login.',
      employee_number: "Your company's own number for the employee.",
      weekly_hours: 'Contracted hours per week.',
      hire_date: 'First day of employment.',
      termination_date: 'Last day of employment, once known.',
      supervisor_id: 'The employee id of the supervisor.',
    },
    examples: (seed) => ({
      listEmployees: { method: 'GET', path: '/v1/employees', query: { per_page: 2, updated_since: '2026-01-01T00:00:00.000Z' } },
      getEmployee: { method: 'GET', path: `/v1/employees/${seed.first(seed.data.employees).id}` },
    }),
  },
})
