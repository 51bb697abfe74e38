/**
 * What each field of each resource means, for the reference document's `components.schemas`.
 * Types, formats and enums come from the wire schemas; this says what a reader cannot see there.
 */

const COMMON: Readonly<Record<string, string>> = {
  id: 'Unique within the resource; ids only grow, so a new record appears after every existing one.',
  created_at: 'When the record was created (UTC, milliseconds).',
  updated_at: 'When the record last changed (UTC, milliseconds). `updated_since` filters on it.',
}

export const FIELD_DOCS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  User: {
    id: 'The user id, the same in every company the person belongs to.',
    email: 'The login email.',
    active: 'Whether the user can log in. A pending user is never active.',
    role_ids: "Ids of the company's roles the user holds.",
    invitation_status:
      '`pending` while a person who already had a login has not accepted your invitation; until then you see only what you sent. `accepted` otherwise.',
    created_at: 'When the user joined your company.',
    updated_at: 'When the user, as your company sees them, last changed.',
  },
  Employee: {
    user_id: 'The user this employment belongs to, if the employee has a login.',
    employee_number: "Your company's own number for the employee.",
    weekly_hours: 'Contracted hours per week.',
    hire_date: 'First day of employment.',
    termination_date: 'Last day of employment, once known.',
    supervisor_id: 'The employee id of the supervisor.',
  },
  Role: { permissions: 'What holders of the role may do in the product.' },
  Company: {
    id: 'Your company id.',
    timezone: 'IANA time zone of the company calendar: day filters (`date_from`, `due_from`, …) use it.',
    country: 'ISO 3166-1 alpha-2 country code.',
  },
  Project: {
    code: "Your company's short code for the project.",
    customer_id: 'The customer the project is for; `null` for an internal project.',
    starts_on: 'First day of the project, if planned.',
    ends_on: 'Last day of the project, if planned.',
  },
  Shift: {
    starts_at: 'Start instant. The shift belongs to the company-calendar day on which it starts.',
    ends_at: 'End instant.',
    break_minutes: 'Unpaid break within the shift.',
  },
  Absence: { date: 'The day of the absence, as entered, in every time zone.', hours: 'Hours absent that day.' },
  Expense: {
    date: 'The day of the expense, as entered, in every time zone.',
    amount: 'Exact decimal with two fractional digits, as a string (`"12.30"`): never a float.',
    currency: 'ISO 4217 currency code.',
  },
  Todo: {
    notes: 'Free text; `null` when empty.',
    due_date:
      'A day (`YYYY-MM-DD`) when `due_is_all_day`, otherwise an instant (UTC); `null` when not due. A timed to-do counts on the company-calendar day of its instant.',
    due_is_all_day: 'Whether `due_date` is a whole day rather than an instant.',
    list_id: "The company's to-do list holding it.",
    assigned_to: 'The user it is assigned to.',
    assignee_group_id: 'The role it is offered to; anyone holding the role may claim it.',
    claimed_by: 'The user who claimed a to-do offered to a role.',
    checklist: 'Sub-items, in order.',
    tag_ids: 'Ids of its tags.',
    source: 'What created it, when it came from another record (`{type, id}`).',
  },
}

/** The description of `field` of component `schema`, if any. */
export function fieldDescription(schema: string, field: string): string | undefined {
  return FIELD_DOCS[schema]?.[field] ?? COMMON[field]
}
