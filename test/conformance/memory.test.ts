import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { describeStorageConformance } from '../../src/conformance/index.js'

describeStorageConformance({
  name: 'memory',
  create: async () => createMemoryAdapter(),
})
