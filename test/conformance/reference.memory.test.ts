import { createMemoryAdapter } from '../../adapters/memory/index.js'
import { describeStorageConformance } from '../../src/conformance/index.js'
import { portsOf } from '../../src/ports/index.js'

describeStorageConformance({
  name: 'memory',
  create: async () => {
    const adapter = createMemoryAdapter()
    return {
      ...portsOf(adapter),
      // The memory adapter keeps change events in an array, in the order recorded.
      readEvents: async () => structuredClone(adapter.events),
      loadDataset: (dataset) => adapter.loadDataset(dataset),
      close: () => adapter.close(),
    }
  },
})
