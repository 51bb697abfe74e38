/**
 * Preloaded into the soak's `serve` (node --require): answers the parent's "memory" message over
 * IPC with this process's own figures, so the soak can tell the V8 heap from native memory
 * (SQLite's page caches and statements, buffers). It adds no work to requests, and the channel
 * never keeps the process alive.
 */
'use strict'
const v8 = require('node:v8')

if (typeof process.send === 'function') {
  process.on('message', (message) => {
    if (message !== 'memory') return
    const usage = process.memoryUsage()
    const heap = v8.getHeapStatistics()
    process.send({ type: 'memory', rss: usage.rss, heapUsed: usage.heapUsed, heapTotal: usage.heapTotal, external: usage.external, arrayBuffers: usage.arrayBuffers, mallocedMemory: heap.malloced_memory })
  })
  process.channel?.unref()
}
