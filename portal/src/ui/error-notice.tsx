import type { ApiError, FieldProblem } from '../api/admin-client'

/**
 * The 422 details that name one of `fields` (`url`, `body.url`, `scopes.2`), by field, as a
 * sentence ("Name is already used…": the API's messages start after the field's name); the
 * rest stay general. `fields` maps each field to its label.
 */
export function problemsByField(error: ApiError | undefined, fields: Readonly<Record<string, string>>): { byField: Map<string, string>; rest: FieldProblem[] } {
  const byField = new Map<string, string>()
  const rest: FieldProblem[] = []
  for (const problem of error?.details ?? []) {
    const field = problem.field.replace(/^body\./, '').replace(/\.\d+$/, '')
    const label = fields[field]
    if (label !== undefined && !byField.has(field)) byField.set(field, /^[a-z]/.test(problem.message) ? `${label} ${problem.message}` : problem.message)
    else if (label === undefined) rest.push(problem)
  }
  return { byField, rest }
}

interface ErrorNoticeProps {
  error: ApiError | undefined
  /** The fields whose details are shown next to them, with their labels. */
  shownFields?: Readonly<Record<string, string>>
  testId?: string
}

/** An error answer, next to the form or list it belongs to; read out at once (role="alert"). */
export function ErrorNotice({ error, shownFields = {}, testId = 'error' }: ErrorNoticeProps) {
  if (error === undefined || error.status === 401) return null
  const { rest } = problemsByField(error, shownFields)
  const message = error.code === 'validation_error' ? 'Please correct the marked fields.' : error.message
  return (
    <div class="notice notice-error" role="alert" data-testid={testId}>
      <p>{message}</p>
      {rest.length > 0 && (
        <ul>
          {rest.map((problem) => (
            <li key={`${problem.field}:${problem.message}`}>
              <code>{problem.field}</code> {problem.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

/** The message under one input; the input names it with `aria-describedby`. */
export function FieldError({ id, message }: { id: string; message: string | undefined }) {
  if (message === undefined) return null
  return (
    <p class="field-error" id={id}>
      {message}
    </p>
  )
}
