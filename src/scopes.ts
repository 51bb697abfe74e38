import { CONTRACT, type Scope } from './api/index.js'

export type { Scope }

/** Every scope of the contract (spec 5), with the platform module it belongs to; derived from the resource declarations. */
export const SCOPE_MODULES = Object.fromEntries(CONTRACT.scopes.map((scope) => [scope, CONTRACT.moduleOf(scope)])) as Readonly<Record<Scope, string>>

/** Every scope of the contract, in catalogue order. */
export const ALL_SCOPES = CONTRACT.scopes as readonly Scope[]
