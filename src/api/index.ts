import { absences } from './absences.js'
import { company } from './company.js'
import { employees } from './employees.js'
import { expenses } from './expenses.js'
import { projects } from './projects.js'
import type { ApiContext, ApiResource, RouteSpec } from './route-spec.js'
import { roles } from './roles.js'
import { shifts } from './shifts.js'
import { todos } from './todos/index.js'
import { users } from './users/index.js'

/**
 * Every resource of the API, in the order of spec 4.1. This one list drives route
 * registration, the storage check of `checkOptions`, and the tests that walk every route.
 */
export const RESOURCES: readonly ApiResource[] = [users, employees, roles, company, projects, shifts, absences, expenses, todos]

/** Every route of the API for `context` (write routes only when writes are configured). */
export function apiRoutes(context: ApiContext): RouteSpec[] {
  return RESOURCES.flatMap((resource) => resource.routes(context))
}
