/**
 * The reference document's prose: what each tag and operation is for, and what each query
 * parameter means, written for an integrator who has not read the spec. Shapes, constraints
 * and enums come from the route schemas; this file only explains them.
 */

export const TAGS = [
  { name: 'users', description: 'People with a login in your company. Add them, and enable or disable their login.' },
  { name: 'employees', description: 'Employment records: who works for your company, from when, with which contract.' },
  { name: 'roles', description: 'Roles users hold in your company; to-dos can be offered to a role.' },
  { name: 'company', description: 'Your own company: name, country, time zone.' },
  { name: 'projects', description: 'Projects of your company (internal or for a customer).' },
  { name: 'shifts', description: 'Planned and worked shifts of your employees.' },
  { name: 'absences', description: 'Leave and absences of your employees.' },
  { name: 'expenses', description: 'Expenses employees submitted, with exact decimal amounts.' },
  { name: 'todos', description: "To-dos in your company's lists: read, create and change them." },
  { name: 'webhooks', description: 'Events we send to your HTTPS endpoint when data changes. Endpoints are managed in company settings.' },
] as const

const UPDATED_SINCE =
  'Only records updated at or after this instant (ISO 8601). Store the time your sync started and pass it here next time; URL-encode an offset (`+02:00` as `%2B02:00`).'

/** Descriptions of query parameters, by name; the same name means the same thing on every list. */
export const PARAMETER_DOCS: Readonly<Record<string, string>> = {
  page: '1-based page number. A page past the last returns an empty `data` with the real `total`.',
  per_page: 'Records per page, at most 100.',
  updated_since: UPDATED_SINCE,
  employee_id: 'Only records of this employee.',
  project_id: 'Only records of this project.',
  status: 'Only records in this status.',
  date_from: 'First day, inclusive, on your company calendar (`YYYY-MM-DD`).',
  date_to: 'Last day, inclusive: a record at 23:59:59 of that day is included.',
  due_from: "First due day, inclusive. A to-do due at a time counts on your company's calendar day.",
  due_to: 'Last due day, inclusive.',
  active: 'Only users whose login is enabled (`true`) or disabled (`false`).',
  email: 'Only the user with this email address (exact, case-insensitive).',
  kind: 'Only projects of this kind.',
  customer_id: 'Only projects for this customer.',
  category: 'Only expenses in this category.',
  assigned_to: 'Only to-dos assigned to this user.',
  list_id: 'Only to-dos in this list.',
  important: 'Only to-dos flagged important (`true`) or not (`false`).',
  id: 'The record id.',
}

export interface OperationDocs {
  description?: string
  responses?: Readonly<Record<number, string>>
}

const list = (what: string, extra = ''): OperationDocs => ({
  description: `Returns ${what}, ordered by id ascending, one page at a time. Paging forward never skips or repeats a record created meanwhile: new records are appended at the end.${extra}`,
  responses: { 200: `A page of ${what}.` },
})
const get = (what: string): OperationDocs => ({
  description: `Returns one ${what} of your company by id.`,
  responses: { 200: `The ${what}.` },
})
/** A write answering 201 with the new record (`created`), which `Location` names. */
const create = (description: string, created: string): OperationDocs => ({
  description,
  responses: { 201: `${created}; \`Location\` names it.` },
})
/** A write answering 200 with the record after it (`changed`). */
const change = (description: string, changed: string): OperationDocs => ({ description, responses: { 200: changed } })

/** By operation id. */
export const OPERATION_DOCS: Readonly<Record<string, OperationDocs>> = {
  listUsers: list('users'),
  getUser: get('user'),
  createUser: create(
    'Invites a person to your company, with optional roles: the user is `pending` (`active: false`), under a fresh id of your company\'s, until the person accepts the invitation, which is always sent (`send_invite` no longer changes anything). The answer is the same whether or not the email has a login in another company. Send an `Idempotency-Key` with `Authorization: Bearer`: a retry without one can answer 409 because the user now exists.',
    'The user as now part of your company',
  ),
  activateUser: change("Enables the user's login. Only for users who belong to your company alone.", 'The user, with `active: true`.'),
  deactivateUser: change("Disables the user's login; their data stays. Only for users who belong to your company alone.", 'The user, with `active: false`.'),
  listEmployees: list('employees'),
  getEmployee: get('employee'),
  listRoles: list('roles'),
  getRole: get('role'),
  getCompany: {
    description: 'Returns the company your API key belongs to. There is no list and no lookup by id: a key sees only its own company.',
    responses: { 200: 'Your company.' },
  },
  listProjects: list('projects'),
  getProject: get('project'),
  listShifts: list('shifts', ' A shift belongs to the company-calendar day on which it starts.'),
  getShift: get('shift'),
  listAbsences: list('absences', ' An absence is one day (`date`), the day as entered in every time zone.'),
  getAbsence: get('absence'),
  listExpenses: list('expenses', ' An expense date is the day entered, in every time zone.'),
  getExpense: get('expense'),
  listTodos: list('to-dos'),
  getTodo: get('to-do'),
  createTodo: create(
    'Creates a to-do in one of your lists, assigned to a member of your company (`assigned_to`) and/or offered to a role (`assignee_group_id`). Send an `Idempotency-Key` with `Authorization: Bearer`: a retry without one can create a second to-do.',
    'The new to-do',
  ),
  updateTodo: change('Writes only the fields you send; `null` clears `notes` or `due_date`. At least one field.', 'The to-do after the change.'),
}
