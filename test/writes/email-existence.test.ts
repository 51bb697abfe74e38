import { describe } from 'vitest'
import { WRITE_ADAPTERS } from '../helpers/write-app.js'
import { describeEmailExistence } from './email-existence.js'

// Issue 21, over real HTTP on the memory and SQLite adapters (Postgres: email-existence.postgres.test.ts).
describe.each(WRITE_ADAPTERS)('POST /v1/users reveals nothing about other companies ($name)', (factory) => {
  describeEmailExistence(factory)
})
