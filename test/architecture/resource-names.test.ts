import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { CONTRACT_RESOURCES } from '../../src/api/index.js'
import { resourceLiteralsIn, resourceLiteralsOf, resourceNamed, type ResourceLiteral } from './resource-literals.js'

// Issue 23: each resource is declared once, and every list of resources (routes, scopes, event
// types, the document) is derived from the declarations. A resource's name written as a literal
// anywhere else is a list restated by hand, which the next resource added forgets.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const NAMES = CONTRACT_RESOURCES.map((declaration) => declaration.name)
/** Where the package's code lives; test/ is all allowed, so it is not scanned. */
const SCANNED = ['src', 'adapters']

/**
 * Places where any resource's name belongs: the table descriptors (a table names the tables it
 * joins), the migrations (frozen in time, they never import application code), the seed, and
 * the conformance suite (tests the package exports).
 */
const SHARED_PLACES = ['adapters/sql/tables/', 'adapters/sql/migrations/', 'src/seed/', 'src/conformance/']

/** A file of the resource's own declaration: `src/api/<name>.ts` or anything in `src/api/<name>/`. */
function isOwnDeclaration(file: string, name: string): boolean {
  return file === `src/api/${name}.ts` || file.startsWith(`src/api/${name}/`)
}

interface Exception {
  file: string
  /** The literals granted; the whole file when absent. */
  literals?: readonly string[]
  reason: string
}

/** Literals that spell a resource's name but are not the resource, each with why. */
const EXCEPTIONS: readonly Exception[] = [
  { file: 'src/ports/module-registry.ts', literals: ['projects'], reason: 'the platform module called projects (spec 5), not the resource' },
  { file: 'src/api/absences.ts', literals: ['projects'], reason: 'absences belong to the platform module projects' },
  { file: 'src/api/expenses.ts', literals: ['projects'], reason: 'expenses belong to the platform module projects' },
  { file: 'src/api/shifts.ts', literals: ['projects'], reason: 'shifts belong to the platform module projects' },
  {
    file: 'src/ports/dataset.ts',
    literals: ['roles', 'employees', 'projects', 'shifts', 'absences', 'expenses', 'todos'],
    reason: "DATASET_TABLES: the seed dataset's tables in load order (keys of Dataset, checked by the compiler); the dataset is the seed's shape, in ports/ only because bulk loads take it",
  },
  { file: 'src/cli/keys.ts', literals: ['company'], reason: 'the CLI flag --company (a company id), not the resource' },
  { file: 'src/cli/webhooks.ts', literals: ['company'], reason: 'the CLI flag --company (a company id), not the resource' },
  {
    file: 'src/openapi/examples.generated.ts',
    reason: "answers recorded over the seed by npm run openapi: they carry the seed's data, e.g. a role's permission shifts.read",
  },
]

function isGranted(literal: ResourceLiteral, exceptions: readonly Exception[]): boolean {
  return exceptions.some((exception) => exception.file === literal.file && (exception.literals === undefined || exception.literals.includes(literal.literal)))
}

/** The literals outside the places where their resource's name belongs, and not granted. */
function offenders(literals: readonly ResourceLiteral[], exceptions: readonly Exception[]): ResourceLiteral[] {
  return literals.filter(
    (literal) => !isOwnDeclaration(literal.file, literal.name) && !SHARED_PLACES.some((place) => literal.file.startsWith(place)) && !isGranted(literal, exceptions),
  )
}

/** `file:line "literal" (name)`, as the failure lists them. */
function describeLiteral(literal: ResourceLiteral): string {
  return `${literal.file}:${literal.line} ${JSON.stringify(literal.literal)} (${literal.name})`
}

describe("the contract's resource names occur as literals only in their declarations, table descriptors, migrations, seed and tests", () => {
  // Parsing every file is the slow part (a few seconds): once, for every check below.
  let found: ResourceLiteral[] = []
  beforeAll(() => {
    found = resourceLiteralsIn(ROOT, SCANNED, NAMES)
  })

  it('takes the names from CONTRACT_RESOURCES', () => {
    expect(NAMES).toHaveLength(9)
    // The scan sees each declaration's own name, so it looks where the names are.
    for (const name of NAMES) expect(found.some((literal) => literal.name === name && isOwnDeclaration(literal.file, name))).toBe(true)
  })

  it('no file under src/ or adapters/ names a resource outside those places, but for the listed exceptions', () => {
    expect(offenders(found, EXCEPTIONS).map(describeLiteral)).toEqual([])
  })

  it('every exception still matches a literal, so the list does not outlive its reasons', () => {
    const unused = EXCEPTIONS.filter((exception) => !found.some((literal) => isGranted(literal, [exception])))
    expect(unused.map((exception) => `${exception.file} ${JSON.stringify(exception.literals ?? 'whole file')}`)).toEqual([])
  })

  it('the lists derived from the declarations restate none: scopes, event types and the document name no resource', () => {
    const derived = (file: string) => file === 'src/scopes.ts' || file.startsWith('src/events/') || (file.startsWith('src/openapi/') && file !== 'src/openapi/examples.generated.ts')
    expect(EXCEPTIONS.filter((exception) => derived(exception.file))).toEqual([])
    expect(found.filter((literal) => derived(literal.file)).map(describeLiteral)).toEqual([])
  })
})

describe('the resource-literal scanner', () => {
  let root: string | undefined

  afterEach(() => {
    if (root !== undefined) rmSync(root, { recursive: true, force: true })
    root = undefined
  })

  /** A folder with `files` (repository path → text), for the scanner to read. */
  function fixture(files: Readonly<Record<string, string>>): string {
    root = mkdtempSync(join(tmpdir(), 'resource-names-'))
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true })
      writeFileSync(join(root, path), text)
    }
    return root
  }

  it('matches a name, an event type, a scope and a path; not a longer word, not the name inside prose', () => {
    expect(['todos', 'todos.created', 'todos:write', '/v1/todos', '/v1/todos/12', '/v1/todos?page=2'].map((text) => resourceNamed(text, NAMES))).toEqual(Array(6).fill('todos'))
    expect(['todosx', 'todos_x', '/v1/todosx', 'my todos', 'GET /v1/todos', 'Todos', 'company_id', 'user'].map((text) => resourceNamed(text, NAMES))).toEqual(Array(8).fill(undefined))
  })

  it('finds quoted, backtick and template literals with their line; skips comments, identifiers, regular expressions and derived templates', () => {
    const text = [
      "import { storage } from './storage.js'", // 1
      "const a = 'todos'", // 2
      'const b = "users.created"', // 3
      'const c = `roles:read`', // 4
      'const d = `/v1/shifts/${id}`', // 5
      "// const e = 'absences'", // 6
      "/* const f = 'expenses'", // 7
      "   'projects' */", // 8
      'const g = storage.employees', // 9
      "const h = /'company'/", // 10
      'const i = `${declaration.name}.${action}`', // 11
      "type T = { 'employees': number } | 'company'", // 12
      'const j = `${prefix}/v1/roles`', // 13
    ].join('\n')
    const found = resourceLiteralsOf('fixture.ts', text, NAMES)
    expect(found.map(({ line, literal, name }) => [line, literal, name])).toEqual([
      [2, 'todos', 'todos'],
      [3, 'users.created', 'users'],
      [4, 'roles:read', 'roles'],
      [5, '/v1/shifts/', 'shifts'],
      [12, 'employees', 'employees'],
      [12, 'company', 'company'],
      [13, '/v1/roles', 'roles'],
    ])
  })

  it('fails on a name outside its places and passes once the literal is gone or in its own declaration', () => {
    const files = {
      'src/api/todos/index.ts': "export const todos = { name: 'todos', scope: 'todos:read' }",
      'src/api/users.ts': "export const users = { name: 'users', joins: 'todos' }",
      'adapters/sql/tables/todos.ts': "export const table = 'todos'",
      'src/seed/generate.ts': "const kind = 'users'",
      'src/events/catalogue.ts': "export const TYPES = ['todos.created', `users.${action}`]",
    }
    const failing = offenders(resourceLiteralsIn(fixture(files), ['src', 'adapters'], NAMES), [])
    expect(failing.map(describeLiteral)).toEqual([
      'src/api/users.ts:1 "todos" (todos)',
      'src/events/catalogue.ts:1 "todos.created" (todos)',
      'src/events/catalogue.ts:1 "users." (users)',
    ])
    rmSync(root as string, { recursive: true, force: true })

    const passing = { ...files, 'src/api/users.ts': "export const users = { name: 'users' }", 'src/events/catalogue.ts': 'export const TYPES = catalogue.eventTypes' }
    expect(offenders(resourceLiteralsIn(fixture(passing), ['src', 'adapters'], NAMES), [])).toEqual([])
  })

  it('grants an exception for its literals in its file only', () => {
    const literals = resourceLiteralsIn(fixture({ 'src/ports/modules.ts': "const modules = ['projects', 'todos']", 'src/other.ts': "const m = 'projects'" }), ['src'], NAMES)
    const granted = offenders(literals, [{ file: 'src/ports/modules.ts', literals: ['projects'], reason: 'a module' }])
    expect(granted.map(describeLiteral)).toEqual(['src/other.ts:1 "projects" (projects)', 'src/ports/modules.ts:1 "todos" (todos)'])
  })
})
