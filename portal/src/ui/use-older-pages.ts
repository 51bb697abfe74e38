import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import type { ApiError } from '../api/admin-client'
import type { Page } from '../api/types'
import { asApiError } from './use-resource'

export interface OlderPages<T> {
  items: T[]
  hasMore: boolean
  loading: boolean
  error: ApiError | undefined
  /** Appends the page before the last item shown. */
  loadOlder: () => void
  /** Starts again from the newest. */
  reload: () => void
  /** Replaces one item in place. */
  replace: (match: (item: T) => boolean, next: T) => void
}

/**
 * A newest-first list read in pages with `before` = the last item's id (the deliveries and the
 * audit trail). `deps` restart it from the newest; a late answer to a replaced list is dropped.
 */
export function useOlderPages<T, Cursor>(
  load: (before: Cursor | undefined) => Promise<Page<T>>,
  cursorOf: (item: T) => Cursor,
  deps: readonly unknown[],
): OlderPages<T> {
  const [items, setItems] = useState<T[]>([])
  const [hasMore, setHasMore] = useState(false)
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<ApiError | undefined>(undefined)
  const [version, setVersion] = useState(0)
  const generation = useRef(0)

  const fetchPage = useCallback((before: Cursor | undefined, append: boolean) => {
    const run = generation.current
    setLoading(true)
    setError(undefined)
    load(before).then(
      (page) => {
        if (run !== generation.current) return
        setItems((current) => (append ? [...current, ...page.data] : page.data))
        setHasMore(page.has_more)
        setLoading(false)
      },
      (reason: unknown) => {
        if (run !== generation.current) return
        setError(asApiError(reason))
        setLoading(false)
      },
    )
    // `load` closes over the deps, which restart the list below.
  }, deps)

  useEffect(() => {
    generation.current += 1
    setItems([])
    setHasMore(false)
    fetchPage(undefined, false)
  }, [...deps, version])

  const last = items[items.length - 1]
  const loadOlder = useCallback(() => {
    if (last !== undefined) fetchPage(cursorOf(last), true)
  }, [last, fetchPage])
  const reload = useCallback(() => setVersion((v) => v + 1), [])
  const replace = useCallback((match: (item: T) => boolean, next: T) => setItems((current) => current.map((item) => (match(item) ? next : item))), [])
  return { items, hasMore, loading, error, loadOlder, reload, replace }
}
