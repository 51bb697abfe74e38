import { Type } from '@sinclair/typebox'
import { Day, Id, Nullable, StringEnum, Timestamp, timestamp } from './wire.js'
import type { ProjectFilter } from '../ports/storage.js'
import { PROJECT_KINDS, PROJECT_STATUSES, type ProjectRecord } from '../ports/records.js'
import { defineResource, exactKeys, EVENT_ACTIONS } from './resource.js'
import { UPDATED_SINCE, updatedSince } from './filters.js'

/** Registry data only: offer/order numbers, CIG/CUP codes, managers, notes and pricing are never exposed. */
export const Project = Type.Object({
  id: Id,
  name: Type.String(),
  code: Type.String(),
  status: StringEnum(PROJECT_STATUSES),
  kind: StringEnum(PROJECT_KINDS),
  customer_id: Nullable(Id),
  starts_on: Nullable(Day),
  ends_on: Nullable(Day),
  created_at: Timestamp,
  updated_at: Timestamp,
})

const filters = {
  status: Type.Optional(StringEnum(PROJECT_STATUSES)),
  kind: Type.Optional(StringEnum(PROJECT_KINDS)),
  customer_id: Type.Optional(Id),
  ...UPDATED_SINCE,
}

export function renderProject(project: ProjectRecord) {
  return {
    id: project.id,
    name: project.name,
    code: project.code,
    status: project.status,
    kind: project.kind,
    customer_id: project.customer_id,
    starts_on: project.starts_on,
    ends_on: project.ends_on,
    created_at: timestamp(project.created_at),
    updated_at: timestamp(project.updated_at),
  }
}

export const projects = defineResource({
  name: 'projects',
  singular: 'project',
  component: 'Project',
  module: 'projects',
  scope: 'projects:read',
  item: Project,
  render: renderProject,
  list: {
    filters,
    reader: (storage) => storage.projects,
    toFilter: (query) => ({
      status: query.status,
      kind: query.kind,
      customerId: query.customer_id,
      updatedSince: updatedSince(query.updated_since),
    }),
  },
  events: { actions: EVENT_ACTIONS, position: 2 },
  conformance: {
    recordKeys: exactKeys<ProjectRecord>()([
      'id', 'name', 'code', 'status', 'kind', 'customer_id', 'starts_on', 'ends_on', 'created_at', 'updated_at',
    ]),
    filterKeys: exactKeys<ProjectFilter>()(['status', 'kind', 'customerId', 'updatedSince']),
    fieldKinds: {
      instants: ['created_at', 'updated_at'],
      days: ['starts_on', 'ends_on'],
      integers: ['id', 'customer_id'],
      booleans: [],
      structures: [],
      texts: ['name', 'code', 'status', 'kind'],
      fractions: [],
    },
  },
  docs: {
    description: 'Projects of your company (internal or for a customer).',
    fields: {
      code: "Your company's short code for the project.",
      customer_id: 'The customer the project is for; `null` for an internal project.',
      starts_on: 'First day of the project, if planned.',
      ends_on: 'Last day of the project, if planned.',
    },
    parameters: {
      kind: 'Only projects of this kind.',
      customer_id: 'Only projects for this customer.',
    },
    examples: (seed) => {
      const project = seed.first(seed.data.projects)
      return {
        listProjects: { method: 'GET', path: '/v1/projects', query: { per_page: 2, status: project.status } },
        getProject: { method: 'GET', path: `/v1/projects/${project.id}` },
      }
    },
  },
})
