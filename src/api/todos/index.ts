import { readRoutes } from '../read-routes.js'
import type { ApiResource } from '../route-spec.js'
import { readTodos } from './read.js'
import { todoWriteRoutes } from './write.js'

/** To-dos: read, created and updated (spec 2.2, 4.1). */
export const todos: ApiResource = {
  name: 'todos',
  storage: { todos: 'reader' },
  routes: (context) => [...readRoutes(readTodos, context), ...(context.writes === undefined ? [] : todoWriteRoutes(context.writes))],
}
