import type { ColumnDefinitionBuilder, Kysely, Migration } from 'kysely'

/**
 * Pending memberships (issue 8): a company that adds a person who already has a login gets a
 * membership that stays `pending` until the person accepts, and shows the company only what it
 * sent (`invited_*`, null once accepted). Existing memberships become `accepted`. One column per
 * ALTER TABLE: SQLite adds one at a time. Self-contained like every migration.
 */
export function invitations(): Migration {
  const added: Array<[string, (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder]> = [
    // 'accepted' | 'pending'
    ['invitation_status', (c) => c.notNull().defaultTo('accepted')],
    ['invited_email', (c) => c],
    // The email filter of a pending member compares this (JavaScript's toLowerCase, like email_lower).
    ['invited_email_lower', (c) => c],
    ['invited_first_name', (c) => c],
    ['invited_last_name', (c) => c],
  ]
  return {
    async up(db: Kysely<any>) {
      for (const [name, build] of added) {
        await db.schema.alterTable('wfa_memberships').addColumn(name, 'text', build).execute()
      }
    },
    async down(db: Kysely<any>) {
      for (const [name] of [...added].reverse()) {
        await db.schema.alterTable('wfa_memberships').dropColumn(name).execute()
      }
    },
  }
}
