import type { Migration } from './migration.ts';

/**
 * Each workflow gets a version, raised by every change: answers carry it (and as the `ETag`), and
 * `PATCH /workflows/{id}` with `If-Match` changes only the version the client read (ADR 014,
 * "Concurrent edits"). Existing workflows start at 1.
 */
export const workflowVersion: Migration = {
  name: '0013_workflow_version',
  async up(db) {
    await db.schema
      .alterTable('workflows')
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
  },
};
