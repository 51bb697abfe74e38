import { parseArgs } from 'node:util'
import { closestName } from '../closest-name.js'
import { CliError } from './cli-error.js'

type FlagSpec = Record<string, { type: 'string' | 'boolean' }>

export const DB_FLAG = { db: { type: 'string' } } as const
export const JSON_FLAG = { json: { type: 'boolean' } } as const

type ParsedFlags<T extends FlagSpec> = { [K in keyof T]?: T[K]['type'] extends 'boolean' ? boolean : string }

/**
 * Parses a command's flags strictly: an unknown flag or a stray positional is a usage error
 * (exit 2), reported with `usage` (`usageText()`).
 */
export function parseFlags<T extends FlagSpec>(args: string[], spec: T, usage: string): ParsedFlags<T> {
  try {
    return parseArgs({ args, options: spec, strict: true, allowPositionals: false }).values as ParsedFlags<T>
  } catch (error) {
    const unknown = (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'([^']+)'/.exec((error as Error).message)?.[1] : undefined
    if (unknown !== undefined) {
      // In our words, with the flag it most likely meant (a typo: `--compnay`).
      const closest = closestName(unknown.replace(/^-+/, ''), Object.keys(spec))
      throw new CliError(`unknown flag ${unknown}${closest === undefined ? '' : ` (did you mean --${closest}?)`}\n${usage}`, 2)
    }
    throw new CliError(`${(error as Error).message}\n${usage}`, 2)
  }
}

/**
 * The refusal of a command line whose action is missing or unknown: the actions are the
 * command's help topics (`"keys create"` …), and a typo gets the closest one.
 */
export function actionError(command: string, action: string | undefined, topics: Readonly<Record<string, unknown>>, usage: string): CliError {
  const actions = Object.keys(topics)
    .filter((topic) => topic.startsWith(`${command} `))
    .map((topic) => topic.slice(command.length + 1))
  if (action === undefined || action.startsWith('-')) return new CliError(`${command} needs an action: ${actions.join(', ')}\n${usage}`, 2)
  const closest = closestName(action, actions)
  return new CliError(`unknown ${command} action "${action}"${closest === undefined ? '' : ` (did you mean "${closest}"?)`}\n${usage}`, 2)
}

export function required(value: string | undefined, flag: string, usage: string): string {
  if (value === undefined || value === '') throw new CliError(`missing --${flag}\n${usage}`, 2)
  return value
}

export function positiveInteger(value: string, flag: string): number {
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new CliError(`--${flag} must be a positive integer, got "${value}"`, 2)
  }
  return Number(value)
}

export function booleanFlag(value: string, flag: string): boolean {
  if (value !== 'true' && value !== 'false') throw new CliError(`--${flag} must be true or false, got "${value}"`, 2)
  return value === 'true'
}

const DURATION = /^(\d+)(ms|s|m|h)$/
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }

/** A duration such as `500ms`, `10s`, `5m` or `2h`, in milliseconds (at least 1). */
export function durationFlag(value: string, flag: string): number {
  const match = DURATION.exec(value)
  const ms = match === null ? Number.NaN : Number(match[1]) * (UNIT_MS[match[2] as string] as number)
  if (!Number.isSafeInteger(ms) || ms < 1) throw new CliError(`--${flag} must be a duration such as 500ms, 10s, 5m or 2h, got "${value}"`, 2)
  return ms
}
