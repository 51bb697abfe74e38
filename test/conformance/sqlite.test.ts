import { openSqliteAdapter } from '../../adapters/sqlite/index.js'
import { describeStorageConformance } from '../../src/conformance/index.js'

describeStorageConformance({
  name: 'sqlite',
  // A new in-memory database per test: migrated, empty, closed after the test.
  create: () => openSqliteAdapter({ filename: ':memory:' }),
})
