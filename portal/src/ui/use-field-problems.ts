import { useState } from 'preact/hooks'
import type { ApiError } from '../api/admin-client'
import { problemsByField } from './error-notice'

/**
 * A form's problems per field: those its own checks found before sending, else those of the
 * API's 422 answer. Error elements are `<idPrefix>-<field>-error`.
 */
export function useFieldProblems<F extends string>(error: ApiError | undefined, fields: Readonly<Record<F, string>>, idPrefix: string) {
  const [local, setLocal] = useState<Partial<Record<F, string>>>({})
  const { byField } = problemsByField(error, fields)
  const problem = (field: F): string | undefined => local[field] ?? byField.get(field)
  const errorId = (field: F) => (problem(field) === undefined ? undefined : `${idPrefix}-${field}-error`)
  /** A field's `aria-describedby`: its hint, and its error when it has one. */
  const describedBy = (hint: string, field: F) => [hint, errorId(field)].filter(Boolean).join(' ')
  /** Shows what the form's own checks found; true when they found nothing. */
  const accept = (found: Partial<Record<F, string>>): boolean => {
    setLocal(found)
    return Object.keys(found).length === 0
  }
  return { problem, errorId, describedBy, accept }
}
