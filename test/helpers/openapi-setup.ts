import { afterAll, afterEach } from 'vitest'
import { formatResponseProblems, takeResponseProblems } from './response-problems.js'

/**
 * vitest `setupFiles`: a test fails when any API response it received (through `app.inject` or
 * real HTTP, from an app built with `withResponseChecks`) is not as the OpenAPI document says.
 */

// Issue 23's proof: record every response the tests receive (response-recording.ts). Loaded only when asked.
const recordTo = process.env.WORKFORCE_RECORD_RESPONSES
if (recordTo !== undefined && recordTo !== '') (await import('./response-recording.js')).startResponseRecording(recordTo)

afterEach(() => failOnProblems())
// A response that arrived after the file's last test (an `afterAll` request) still counts.
afterAll(() => failOnProblems())

function failOnProblems(): void {
  const { problems, skipReason } = takeResponseProblems()
  if (problems.length === 0 || skipReason !== undefined) return
  throw new Error(formatResponseProblems(problems))
}
