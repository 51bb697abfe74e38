import { Type } from '@sinclair/typebox'
import { Day, Id, Nullable, StringEnum, Timestamp, timestamp } from './wire.js'
import type { ProjectFilter } from '../ports/storage.js'
import { PROJECT_KINDS, PROJECT_STATUSES, type ProjectRecord } from '../ports/records.js'
import { readOnlyResource, type ReadResource } from './read-routes.js'
import { updatedSince } from './filters.js'

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
  updated_since: Type.Optional(Timestamp),
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

const readProjects: ReadResource<ProjectRecord, ProjectFilter, typeof filters, typeof Project> = {
  name: 'projects',
  singular: 'project',
  scope: 'projects:read',
  item: Project,
  filters,
  reader: (storage) => storage.projects,
  toFilter: (query) => ({
    status: query.status,
    kind: query.kind,
    customerId: query.customer_id,
    updatedSince: updatedSince(query.updated_since),
  }),
  render: renderProject,
}

export const projects = readOnlyResource(readProjects)
