import { describePostgres, useTestDatabase } from '../helpers/postgres.js'
import { postgresFactory } from './admin-app.js'
import { defineAdminApiSuite } from './admin-suite.js'

describePostgres('the admin API on Postgres', () => {
  const database = useTestDatabase()
  defineAdminApiSuite(postgresFactory(() => database.current.url))
  defineAdminApiSuite(postgresFactory(() => database.current.url), 'http')
})
