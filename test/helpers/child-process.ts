import { spawn, type ChildProcess } from 'node:child_process'

/**
 * Spawns `command` with piped output and resolves once its stdout matches `until`, with the match
 * and `output()`: everything it has printed so far (stdout and stderr), read on, so a test can say
 * what the child logged when an answer surprises it. If it exits first, rejects with what it
 * printed, so a failed start says why. With `withinMs`,
 * a child that has not matched by then is killed (SIGKILL) and the promise rejects: a child
 * that hangs, or whose event loop is blocked, is never left behind.
 *
 * @example
 * const { child, match } = await spawnUntil('serve', process.execPath, [CLI, 'serve'], { env, until: /listening on (\S+)/ })
 */
export function spawnUntil(
  name: string,
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; until: RegExp; withinMs?: number },
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string }> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env })
  return new Promise((resolve, reject) => {
    let stdout = ''
    let output = ''
    let timer: NodeJS.Timeout | undefined
    if (options.withinMs !== undefined) {
      const ms = options.withinMs
      timer = setTimeout(() => {
        child.kill('SIGKILL')
        reject(new Error(`${name} printed no match of ${options.until} within ${ms} ms, and was killed: ${output}`))
      }, ms)
    }
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      output += chunk.toString()
      const match = options.until.exec(stdout)
      if (match !== null) {
        clearTimeout(timer)
        resolve({ child, match, output: () => output })
      }
    })
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited with ${code}: ${output}`))
    })
  })
}

/** Kills `child` with SIGKILL and resolves once it has exited (at once if it already has). */
export function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', () => resolve())
    child.kill('SIGKILL')
  })
}

/**
 * Kills `child` and every process it started, with SIGKILL, and resolves once `child` has
 * exited. `child` must have been spawned with `detached: true` (a process group of its own): a
 * launcher such as `npx tsx` runs the program in a grandchild, which killing only the launcher
 * leaves running (seen: the Quick start's server, still listening after the suite ended).
 */
export function killedWithDescendants(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    const exited = child.exitCode !== null || child.signalCode !== null
    if (!exited) child.once('exit', () => resolve())
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // The whole group has exited already.
    }
    if (exited) resolve()
  })
}
