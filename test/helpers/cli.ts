import { execFile, execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'

/** The built CLI (`npm test` builds first), run exactly as a user or a script would. */
export const CLI = join(import.meta.dirname, '../../dist/cli.js')

const run = promisify(execFile)

/** How a run of a Node script ended: its exit code and everything it printed. */
export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs `script` (default: the built CLI) with `args`; a non-zero exit is a result, not a rejection. */
export async function runNode(args: readonly string[], options: { script?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  const { script = CLI, ...spawnOptions } = options
  try {
    const { stdout, stderr } = await run(process.execPath, [script, ...args], spawnOptions)
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

/** The last line of a command's stdout, as JSON: what `--json` prints once it is done. */
export function lastJson(stdout: string): any {
  return JSON.parse(stdout.trim().split('\n').pop() as string)
}

/** `command` as one `sh` line, each word single-quoted: for util-linux `script -qec <line>`. */
export function shellLine(command: readonly string[]): string {
  return command.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ')
}

/** Whether util-linux `script` is here to run a command on a pseudo-terminal, as a person would. */
export const hasScript = (() => {
  try {
    execFileSync('script', ['-qec', 'true', '/dev/null'])
    return true
  } catch {
    return false
  }
})()
