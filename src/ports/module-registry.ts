/** The contract's platform modules (spec 5). */
export const PLATFORM_MODULES = ['core', 'projects', 'todo'] as const
/**
 * A platform module: one of the contract's, or one a host's own resource declares
 * (`defineResource({ module })`), which the registry is asked about like ours.
 */
export type PlatformModule = (typeof PLATFORM_MODULES)[number] | (string & {})

/**
 * Which platform modules a company has switched on. A route whose module is inactive
 * answers 403 `forbidden` even to a key holding the route's scope.
 *
 * The plugin caches answers for `moduleCacheTtlMs` (default 5 s), so a change made
 * elsewhere takes effect within that time.
 */
export interface ModuleRegistry {
  isActive(companyId: number, module: PlatformModule): Promise<boolean>
}

/**
 * A module registry that can also switch modules: what the reference adapters implement and
 * the CLI's `modules set` needs. The plugin itself only reads, so hosts need not implement it.
 */
export interface ModuleSwitchboard extends ModuleRegistry {
  setActive(companyId: number, module: PlatformModule, active: boolean): Promise<void>
}
