import { type Kysely, sql } from 'kysely';
import type { ColumnTypes } from '../statement-forms.ts';
import type { Migration } from './migration.ts';

/**
 * A run's template context once per event (ADR 020): the part every workflow of an event renders
 * alike (the event, its device and geofence, the payload) goes to `workflow_event_contexts`, one
 * row per event that starts runs, and each run points at it (`context_id`) and keeps only what is
 * its own: the workflow's name as of its start (`workflow_name`; the id and `test` it had already).
 * `context` becomes nullable: runs started before keep their whole context there and run as they
 * did; runs started since leave it null.
 *
 * PostgreSQL changes `workflow_runs` in place. SQLite cannot drop a NOT NULL, so the table is
 * rebuilt (same columns, indexes and keys, plus the new ones) and its rows copied, with foreign
 * keys off meanwhile: dropping the old table would otherwise cascade to every action row.
 */
export const eventContexts: Migration = {
  name: '0017_event_contexts',
  async up(db, { dialect, types: t }) {
    if (dialect === 'postgres') {
      await createContexts(db, t);
      await db.schema
        .alterTable('workflow_runs')
        .addColumn('context_id', 'text', (c) => c.references('workflow_event_contexts.id'))
        .execute();
      await db.schema.alterTable('workflow_runs').addColumn('workflow_name', 'text').execute();
      await db.schema
        .alterTable('workflow_runs')
        .alterColumn('context', (c) => c.dropNotNull())
        .execute();
      await createContextIndex(db);
      return;
    }

    // Outside any transaction (Kysely runs SQLite migrations without one): the pragma is ignored
    // inside one. The rebuild itself is one transaction.
    await sql`pragma foreign_keys = off`.execute(db);
    try {
      await sql`begin immediate`.execute(db);
      try {
        await rebuildRunsSqlite(db, t);
        const broken = await sql`pragma foreign_key_check`.execute(db);
        if (broken.rows.length > 0) throw new Error('0017: rebuilt workflow_runs breaks a foreign key');
        await sql`commit`.execute(db);
      } catch (error) {
        await sql`rollback`.execute(db);
        throw error;
      }
    } finally {
      await sql`pragma foreign_keys = on`.execute(db);
    }
  },
};

async function createContexts(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable('workflow_event_contexts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    // Text, not JSON: read back as written (a `jsonb` would reorder the keys templates may show).
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
}

/** Finds the runs of a context when runs are deleted (unused contexts go) and for its foreign key. */
async function createContextIndex(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('workflow_runs_context_idx')
    .on('workflow_runs')
    .column('context_id')
    .where(sql.ref('context_id'), 'is not', null)
    .execute();
}

async function rebuildRunsSqlite(db: Kysely<unknown>, t: ColumnTypes): Promise<void> {
  await createContexts(db, t);
  await db.schema
    .createTable('workflow_runs_rebuilt')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
    .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('event_row_id', 'text')
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('context', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .addColumn('finished_at', t.timestamp)
    .addColumn('context_id', 'text', (c) => c.references('workflow_event_contexts.id'))
    .addColumn('workflow_name', 'text')
    .execute();
  await sql`
    insert into workflow_runs_rebuilt (id, workspace_id, workflow_id, origin, event_row_id, event_id,
      event_type, context, status, created_at, finished_at)
    select id, workspace_id, workflow_id, origin, event_row_id, event_id, event_type, context, status,
      created_at, finished_at
    from workflow_runs`.execute(db);
  await sql`drop table workflow_runs`.execute(db);
  // `workflow_action_runs.run_id` names `workflow_runs`: it refers to the rebuilt table from here.
  await sql`alter table workflow_runs_rebuilt rename to workflow_runs`.execute(db);
  // The indexes of 0009, unchanged.
  await db.schema
    .createIndex('workflow_runs_workflow_created_idx')
    .on('workflow_runs')
    .columns(['workflow_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('workflow_runs_event_workflow_uq')
    .on('workflow_runs')
    .columns(['event_row_id', 'workflow_id'])
    .unique()
    .where(sql.ref('origin'), '=', 'event')
    .execute();
  await createContextIndex(db);
}
