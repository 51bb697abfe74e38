import { useCallback, useState } from 'preact/hooks'
import type { ApiError } from '../api/admin-client'
import { usePortal } from './portal-context'
import { asApiError } from './use-resource'

export interface Action {
  /** Runs a mutation; its answer, or undefined when it failed (the error is then in `error`). */
  run: <T>(mutation: () => Promise<T>) => Promise<T | undefined>
  pending: boolean
  error: ApiError | undefined
  clear: () => void
}

/** A mutation's pending state and error, for the form or list that shows them. */
export function useAction(): Action {
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<ApiError | undefined>(undefined)
  const { announce } = usePortal()
  const run = useCallback(async <T,>(mutation: () => Promise<T>) => {
    setPending(true)
    setError(undefined)
    // The last success message no longer describes the page once something else is tried.
    announce('')
    try {
      return await mutation()
    } catch (reason) {
      setError(asApiError(reason))
      return undefined
    } finally {
      setPending(false)
    }
  }, [announce])
  const clear = useCallback(() => setError(undefined), [])
  return { run, pending, error, clear }
}
