import { rmSync } from 'node:fs'

/** Deletes a SQLite database and its WAL companions; `keepMain` keeps the database file itself. */
export function removeSqliteFiles(path: string, options: { keepMain?: boolean } = {}): void {
  for (const suffix of options.keepMain === true ? ['-wal', '-shm'] : ['', '-wal', '-shm']) {
    rmSync(path + suffix, { force: true })
  }
}
