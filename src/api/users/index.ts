import { readRoutes } from '../read-routes.js'
import type { ApiResource } from '../route-spec.js'
import { readUsers } from './read.js'
import { userWriteRoutes } from './write.js'

/** Users: read, provisioned, activated and deactivated (spec 1, 3.3, 4.1). */
export const users: ApiResource = {
  name: 'users',
  storage: { users: 'reader' },
  routes: (context) => [...readRoutes(readUsers, context), ...(context.writes === undefined ? [] : userWriteRoutes(context.writes))],
}
