import { describe, expect, it } from 'vitest'
import { describeDb } from '../../src/cli/open-adapter.js'

describe('describeDb', () => {
  it('hides the password of a Postgres URL, which the CLI would otherwise print in errors', () => {
    expect(describeDb('postgres://app:s3cret@db.internal:5432/hr')).toBe('postgres://app:***@db.internal:5432/hr')
    expect(describeDb('postgresql://app:s3cret@db/hr')).not.toContain('s3cret')
  })

  it('leaves a URL without password and a SQLite path as they are', () => {
    expect(describeDb('postgres://postgres@127.0.0.1:5432/test')).toBe('postgres://postgres@127.0.0.1:5432/test')
    expect(describeDb('/tmp/demo.db')).toBe('/tmp/demo.db')
  })
})
