/**
 * The responses of the running test that the OpenAPI document does not describe. The route
 * hook (`response-checks.ts`) records them as they leave; `openapi-setup.ts` fails the test
 * that received them and clears the list. Kept apart from the checker so that a test file
 * that never builds an app does not load Ajv.
 */

export interface ResponseProblem {
  method: string
  url: string
  status: number
  problem: string
}

const recorded: ResponseProblem[] = []
let skipReason: string | undefined

export function recordResponseProblem(problem: ResponseProblem): void {
  recorded.push(problem)
}

/** Everything recorded since the last call, and the current test's opt-out; both are reset. */
export function takeResponseProblems(): { problems: ResponseProblem[]; skipReason: string | undefined } {
  const taken = { problems: recorded.splice(0), skipReason }
  skipReason = undefined
  return taken
}

/**
 * Opts the current test out of the response check, for a test that deliberately provokes a
 * response the document does not (and should not) describe. Say why in `reason`: it is the
 * only record of the exception. Call it inside the test; it lapses when the test ends.
 */
export function skipResponseChecks(reason: string): void {
  if (reason.trim() === '') throw new Error('skipResponseChecks needs a reason')
  skipReason = reason
}

export function formatResponseProblems(problems: readonly ResponseProblem[]): string {
  const lines = problems.slice(0, 20).map((p) => `  ${p.method} ${p.url} → ${p.status}: ${p.problem}`)
  if (problems.length > 20) lines.push(`  … and ${problems.length - 20} more`)
  return `${problems.length} response(s) not as the OpenAPI document describes them:\n${lines.join('\n')}`
}
