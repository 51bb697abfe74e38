/**
 * The reference document's shared prose: the `webhooks` tag, and what the query parameters that
 * mean the same on every list say. Each resource's own prose (its tag, its fields, its filters,
 * its operations) is in its declaration (`docs`); shapes, constraints and enums come from the
 * route schemas.
 */

/** The tag of the document's `webhooks` section, after the resources' tags. */
export const WEBHOOKS_TAG = {
  name: 'webhooks',
  description: 'Events we send to your HTTPS endpoint when data changes. Endpoints are managed in company settings.',
} as const

const UPDATED_SINCE =
  'Only records updated at or after this instant (ISO 8601). Store the time your sync started and pass it here next time; URL-encode an offset (`+02:00` as `%2B02:00`).'

/** Descriptions of the query parameters shared by several lists, by name; a declaration's `docs.parameters` adds its own. */
export const PARAMETER_DOCS: Readonly<Record<string, string>> = {
  page: '1-based page number. A page past the last returns an empty `data` with the real `total`.',
  per_page: 'Records per page, at most 100.',
  updated_since: UPDATED_SINCE,
  employee_id: 'Only records of this employee.',
  project_id: 'Only records of this project.',
  status: 'Only records in this status.',
  date_from: 'First day, inclusive, on your company calendar (`YYYY-MM-DD`).',
  date_to: 'Last day, inclusive: a record at 23:59:59 of that day is included.',
  id: 'The record id.',
}

/** What `id`, `created_at` and `updated_at` mean on every resource, unless its declaration says otherwise (`docs.fields`). */
export const COMMON_FIELD_DOCS: Readonly<Record<string, string>> = {
  id: 'Unique within the resource; ids only grow, so a new record appears after every existing one.',
  created_at: 'When the record was created (UTC, milliseconds).',
  updated_at: 'When the record last changed (UTC, milliseconds). `updated_since` filters on it.',
}
