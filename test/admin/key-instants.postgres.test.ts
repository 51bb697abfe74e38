import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { postgresFactory } from './admin-app.js'
import { defineKeyInstantsSuite } from './key-instants-suite.js'

describePostgres('key expiries on Postgres', () => {
  const database = useTestDatabase()
  defineKeyInstantsSuite(postgresFactory(() => database.current.url))
  defineKeyInstantsSuite(postgresFactory(() => database.current.url), 'http')
})
