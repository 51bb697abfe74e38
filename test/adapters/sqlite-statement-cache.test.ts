import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { STATEMENT_CACHE_MAX, StatementCache } from '../../adapters/sqlite/sqlite-statement-cache.js'

describe('StatementCache', () => {
  const database = new Database(':memory:')
  const prepared: string[] = []
  const cache = (max?: number) =>
    new StatementCache((sql) => {
      prepared.push(sql)
      return database.prepare(sql)
    }, max)
  afterEach(() => {
    prepared.length = 0
  })

  it('prepares a text once and hands the same statement back while it is held', () => {
    const statements = cache()
    const first = statements.get('select 1 as one')
    expect(statements.get('select 1 as one')).toBe(first)
    expect(first.get()).toEqual({ one: 1 })
    expect(prepared).toEqual(['select 1 as one'])
  })

  it('holds at most max statements, dropping the least recently used: a dropped text is prepared again', () => {
    const statements = cache(2)
    statements.get('select 1')
    statements.get('select 2')
    // Used again: now the most recent, so "select 2" is the one dropped next.
    statements.get('select 1')
    statements.get('select 3')
    expect(statements.size).toBe(2)
    statements.get('select 1')
    expect(prepared).toEqual(['select 1', 'select 2', 'select 3'])
    statements.get('select 2')
    expect(prepared).toEqual(['select 1', 'select 2', 'select 3', 'select 2'])
    expect(statements.size).toBe(2)
  })

  it('keeps nothing for a text that fails to prepare', () => {
    const statements = cache(2)
    expect(() => statements.get('select from nowhere')).toThrow()
    expect(statements.size).toBe(0)
  })

  it('has a bound that is a positive integer', () => {
    expect(STATEMENT_CACHE_MAX).toBeGreaterThan(0)
    expect(() => cache(0)).toThrow(/max must be a positive integer/)
  })
})
