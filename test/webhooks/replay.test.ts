import { WRITE_ADAPTERS } from '../helpers/write-app.js'
import { defineReplaySuite } from './replay-suite.js'

for (const adapter of WRITE_ADAPTERS) defineReplaySuite(adapter)
