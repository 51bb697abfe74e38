import { readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildDocument } from '../../scripts/openapi.js'
import {
  CHANGELOG_FILE,
  type Change,
  type Compatibility,
  compareDocuments,
  RELEASED_FILE,
  unmentionedAdditions,
} from '../../scripts/openapi-compat.js'

type Json = Record<string, any>

const released = (): Json => JSON.parse(readFileSync(RELEASED_FILE, 'utf8')) as Json

/** The changes a mutation of the released document makes: each test edits its own fresh copy. */
function changesAfter(mutate: (document: Json) => void): Compatibility {
  const after = released()
  mutate(after)
  return compareDocuments(released(), after)
}

const messages = (changes: readonly Change[]): string[] => changes.map((change) => change.message)

function found<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the released document has no ${what}: pick another example`)
  return value
}

const operation = (document: Json, method: string, path: string): Json => found(document.paths[path]?.[method], `${method} ${path}`)
const parameter = (document: Json, method: string, path: string, name: string): Json =>
  found(operation(document, method, path).parameters.find((candidate: Json) => candidate.name === name), `parameter ${name}`)
const requestBody = (document: Json, method: string, path: string): Json =>
  found(operation(document, method, path).requestBody?.content['application/json'].schema, `request body of ${method} ${path}`)
const todo = (document: Json): Json => found(document.components.schemas.Todo, 'Todo schema')
const payload = (document: Json, event: string): Json =>
  found(document.webhooks[event]?.post.requestBody.content['application/json'].schema, `payload of ${event}`)
const without = (list: readonly string[], item: string): string[] => list.filter((entry) => entry !== item)

function removeField(schema: Json, field: string): void {
  delete schema.properties[field]
  schema.required = without(schema.required ?? [], field)
}

describe('/v1 stays additive', () => {
  let current: Compatibility

  beforeAll(async () => {
    current = compareDocuments(released(), JSON.parse(await buildDocument()))
  })

  // The CI gate. A failure lists each breaking change: undo it, or bring it in a new version (docs/api.md §9).
  it('the generated document has no breaking change against docs/openapi/v1-released.json', () => {
    expect(messages(current.breaking)).toEqual([])
  })

  it("every addition since the release is mentioned in CHANGELOG.md's Unreleased section", () => {
    expect(messages(unmentionedAdditions(current.additions, readFileSync(CHANGELOG_FILE, 'utf8')))).toEqual([])
  })
})

describe('breaking changes', () => {
  // `rule` names our own rule in scripts/openapi-compat.ts where api-smart-diff alone answers otherwise.
  const cases: [kind: string, mutate: (document: Json) => void, message: string | string[], rule?: string][] = [
    ['a removed path', (document) => delete document.paths['/v1/roles/{id}'], 'removed operation GET /v1/roles/{id}'],
    ['a removed operation', (document) => delete document.paths['/v1/todos'].post, 'removed operation POST /v1/todos'],
    [
      'a removed parameter',
      (document) => {
        const list = operation(document, 'get', '/v1/todos')
        list.parameters = list.parameters.filter((candidate: Json) => candidate.name !== 'list_id')
      },
      'removed query parameter list_id of GET /v1/todos',
    ],
    [
      'a field removed from a response, and so from the record a webhook payload carries',
      (document) => removeField(todo(document), 'title'),
      ['response 200 of GET /v1/todos: removed field data[].title', 'payload of event todos.updated: removed field data.title'],
    ],
    [
      'an enum value removed from a query parameter',
      (document) => {
        const { schema } = parameter(document, 'get', '/v1/todos', 'status')
        schema.enum = without(schema.enum, 'cancelled')
      },
      'query parameter status of GET /v1/todos: removed enum value "cancelled"',
    ],
    [
      'an enum value removed from a request body',
      (document) => {
        const priority = requestBody(document, 'post', '/v1/todos').properties.priority
        priority.enum = without(priority.enum, 'urgent')
      },
      'request body of POST /v1/todos: field priority: removed enum value "urgent"',
    ],
    [
      'a newly required request field',
      (document) => requestBody(document, 'post', '/v1/todos').required.push('notes'),
      'request body of POST /v1/todos: newly required field notes',
    ],
    [
      'a request field that no longer accepts null',
      (document) => (requestBody(document, 'post', '/v1/todos').properties.notes.type = 'string'),
      'request body of POST /v1/todos: field notes: type changed from string|null to string',
    ],
    [
      'a request field changed from string to integer',
      (document) => (requestBody(document, 'post', '/v1/todos').properties.title.type = 'integer'),
      'request body of POST /v1/todos: field title: type changed from string to integer',
    ],
    [
      'a response field that may now be null',
      (document) => (todo(document).properties.title.type = ['string', 'null']),
      'response 200 of GET /v1/todos/{id}: field data.title: type changed from string to string|null',
      'type-sets',
    ],
    [
      'a response field changed from string to integer',
      (document) => (todo(document).properties.title.type = 'integer'),
      'response 201 of POST /v1/todos: field data.title: type changed from string to integer',
      'type-sets',
    ],
    [
      'a newly required parameter',
      (document) => (parameter(document, 'get', '/v1/todos', 'list_id').required = true),
      'query parameter list_id of GET /v1/todos: now required',
    ],
    ['a removed webhook event type', (document) => delete document.webhooks['todos.deleted'], 'removed webhook event todos.deleted'],
    [
      'a field removed from a webhook payload',
      (document) => removeField(payload(document, 'todos.created'), 'company_id'),
      'payload of event todos.created: removed field company_id',
    ],
    [
      'an enum value removed from a response (our decision: records in that state would be reported otherwise)',
      (document) => (todo(document).properties.status.enum = without(todo(document).properties.status.enum, 'cancelled')),
      'response 200 of GET /v1/todos: field data[].status: removed enum value "cancelled"',
      'enum-sets',
    ],
    [
      'an optional field removed from a request body (the API answers 422 to fields it does not know)',
      (document) => delete requestBody(document, 'post', '/v1/todos').properties.notes,
      'request body of POST /v1/todos: removed field notes',
      'field-removal',
    ],
    [
      'an optional field removed from a response',
      (document) => delete document.components.schemas.ErrorEnvelope.properties.error.properties.details,
      'response 422 of POST /v1/todos: removed field error.details',
      'field-removal',
    ],
  ]

  it.each(cases)('%s', (_kind, mutate, expected, rule) => {
    const { breaking } = changesAfter(mutate)
    for (const message of [expected].flat()) {
      expect(messages(breaking)).toContain(message)
      expect(breaking.find((change) => change.message === message)?.rule).toBe(rule)
    }
  })
})

describe('non-breaking changes', () => {
  let changes: Compatibility

  // One document with all of them: they touch different things, so none hides another, and one diff is quicker.
  beforeAll(() => {
    changes = changesAfter((document) => {
      operation(document, 'get', '/v1/todos').parameters.push({ in: 'query', name: 'tag_id', required: false, schema: { type: 'integer', minimum: 1 } })
      document.paths['/v1/tags'] = { get: { ...structuredClone(operation(document, 'get', '/v1/roles')), operationId: 'listTags' } }
      todo(document).properties.color = { type: ['string', 'null'] }
      parameter(document, 'get', '/v1/todos', 'status').schema.enum.push('archived')
      todo(document).properties.priority.enum.push('someday')
      document.webhooks['tags.created'] = structuredClone(document.webhooks['todos.created'])
      payload(document, 'todos.updated').properties.actor_id = { type: 'integer', minimum: 1 }
      todo(document).properties.notes.type = 'string'
      requestBody(document, 'post', '/v1/todos').properties.title.type = ['string', 'null']
    })
  })

  it('none is breaking', () => {
    expect(messages(changes.breaking)).toEqual([])
  })

  it.each([
    ['a new optional query parameter', 'added optional query parameter tag_id to GET /v1/todos'],
    ['a new path', 'added operation GET /v1/tags'],
    ['a new optional response field', 'response 200 of GET /v1/todos: added field data[].color'],
    ['a new enum value in a request parameter', 'query parameter status of GET /v1/todos: added enum value "archived"'],
    ['a new enum value in a response (docs/api.md §9: clients treat unknown values as "other")', 'response 200 of GET /v1/todos: field data[].priority: added enum value "someday"'],
    ['a new webhook event type', 'added webhook event tags.created'],
    ['a new field in a webhook payload', 'payload of event todos.updated: added field actor_id'],
  ])('%s is listed as an addition', (_kind, message) => {
    expect(messages(changes.additions)).toContain(message)
  })

  it.each([
    ['a response field that is never null any more', 'response 200 of GET /v1/todos: field data[].notes: type changed from string|null to string', undefined],
    ['a request field that accepts null as well', 'request body of POST /v1/todos: field title: type changed from string to string|null', 'type-sets'],
  ])('%s is not breaking either', (_kind, message, rule) => {
    expect(changes.additions.find((change) => change.message === message)?.rule).toBe(rule)
    expect(messages(changes.additions)).toContain(message)
  })
})

describe('unmentionedAdditions', () => {
  const addition: Change = { message: 'added optional query parameter tag_id to GET /v1/todos', subject: 'tag_id', type: 'non-breaking' }
  const changelog = (unreleased: string, releasedNotes = ''): string =>
    ['# Changelog', '', '## [Unreleased]', '', unreleased, '', '## [0.1.0] - 2026-09-30', '', releasedNotes, ''].join('\n')

  it('accepts an addition named in a code span of the Unreleased section', () => {
    expect(unmentionedAdditions([addition], changelog('- New filter `tag_id` on `GET /v1/todos`.'))).toEqual([])
  })

  it('reports an addition the Unreleased section does not name', () => {
    expect(unmentionedAdditions([addition], changelog('- Faster list endpoints.'))).toEqual([addition])
  })

  it('reports an addition named only under a released version', () => {
    expect(unmentionedAdditions([addition], changelog('- Faster list endpoints.', '- New filter `tag_id`.'))).toEqual([addition])
  })

  it('needs the name itself, in code: not a longer name, not plain prose', () => {
    expect(unmentionedAdditions([addition], changelog('- New filters `tag_ids` and tag_id.'))).toEqual([addition])
  })

  it('reads an Unreleased heading without brackets', () => {
    expect(unmentionedAdditions([addition], '## Unreleased\n\n- `?tag_id=` filters to-dos.\n')).toEqual([])
  })
})
