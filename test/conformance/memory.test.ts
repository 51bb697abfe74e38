import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { describeStorageConformance } from '../../src/conformance/index.js'

describeStorageConformance({
  name: 'memory',
  create: async () => {
    const adapter = createMemoryAdapter()
    return {
      storage: adapter.storage,
      keyStore: adapter.keyStore,
      modules: adapter.modules,
      writes: adapter.writes,
      idempotency: adapter.idempotency,
      // The memory adapter keeps change events in an array, in the order recorded.
      readEvents: async () => structuredClone(adapter.events),
      loadDataset: (dataset) => adapter.loadDataset(dataset),
      close: () => adapter.close(),
    }
  },
})
