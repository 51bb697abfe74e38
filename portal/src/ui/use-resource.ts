import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { ApiError } from '../api/admin-client'

export interface Resource<T> {
  data: T | undefined
  error: ApiError | undefined
  loading: boolean
  reload: () => void
  /** Replaces the data in place, e.g. with a changed row from a mutation's answer. */
  update: (change: (data: T) => T) => void
}

/** A GET that runs on mount and when `deps` change; a late answer to an older load is dropped. */
export function useResource<T>(load: () => Promise<T>, deps: readonly unknown[]): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<ApiError | undefined>(undefined)
  const [loading, setLoading] = useState(true)
  const [version, setVersion] = useState(0)
  const latest = useRef(0)

  useEffect(() => {
    const run = ++latest.current
    setLoading(true)
    load().then(
      (value) => {
        if (run !== latest.current) return
        setData(value)
        setError(undefined)
        setLoading(false)
      },
      (reason: unknown) => {
        if (run !== latest.current) return
        setError(asApiError(reason))
        setLoading(false)
      },
    )
    // The caller names what the load depends on: `load` itself is a new function each render.
  }, [...deps, version])

  const reload = useCallback(() => setVersion((v) => v + 1), [])
  const update = useCallback((change: (data: T) => T) => setData((current) => (current === undefined ? current : change(current))), [])
  return { data, error, loading, reload, update }
}

export function asApiError(reason: unknown): ApiError {
  return reason instanceof ApiError ? reason : new ApiError(0, 'client_error', reason instanceof Error ? reason.message : String(reason))
}
