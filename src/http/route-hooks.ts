/**
 * Adds a hook to a route's own hook list (in an `onRoute` hook). Route-level hooks run only
 * on the routes that need them: the GET hot path pays for no idempotency hook, and the auth
 * hook closes over the route's scope instead of reading `routeOptions.config` per request.
 */
export function withHook<H>(existing: H | H[] | undefined, hook: H, position: 'first' | 'last'): H[] {
  const hooks = existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]
  return position === 'first' ? [hook, ...hooks] : [...hooks, hook]
}
