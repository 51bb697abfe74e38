/** The two targets of the HTTP comparison. */
export type TargetKind = 'plugin' | 'bare'

/** Parent → server process. */
export type ParentMessage =
  | { type: 'cpu' }
  /** Start sampling this process's CPU (V8 profiler through `node:inspector`). */
  | { type: 'profile-start' }
  /** Stop sampling and write the `.cpuprofile` to `path`. */
  | { type: 'profile-stop'; path: string }
  | { type: 'close' }

/** Server process → parent. */
export type ChildMessage =
  | { type: 'ready'; url: string; headers: Record<string, string> }
  | { type: 'failed'; message: string }
  /** CPU time (user + system) the server process has used so far, in microseconds. */
  | { type: 'cpu'; micros: number }
  | { type: 'profile-started' }
  | { type: 'profile-written' }
