import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/**
 * The one job engine (ADR 020): fewer rows per workflow action.
 * - The attempt that ends an action (success, or failure for good) is kept on the action's row —
 *   `started_at`, `duration_ms`, `response_excerpt` beside the status code and error it had — and
 *   only attempts followed by a retry get a row of `workflow_action_attempts`. The run pages read
 *   both. Actions ended before this kept every attempt as a row: their new columns stay null.
 * - The claim index leaves out `webhook` actions: they are deliveries and wait in
 *   `webhook_deliveries`; pending in their thousands while a receiver is slow, they made every
 *   claim walk past them.
 * Jobs queued, in flight or dead are untouched: the columns are added empty and the index covers
 * the same rows the claim reads.
 */
export const oneJobEngine: Migration = {
  name: '0015_one_job_engine',
  async up(db, { types: t }) {
    await db.schema.alterTable('workflow_action_runs').addColumn('started_at', t.timestamp).execute();
    await db.schema.alterTable('workflow_action_runs').addColumn('duration_ms', t.double).execute();
    await db.schema.alterTable('workflow_action_runs').addColumn('response_excerpt', 'text').execute();
    await db.schema
      .createIndex('workflow_action_runs_claim_idx')
      .on('workflow_action_runs')
      .columns(['due_at', 'id'])
      .where(sql.raw<boolean>(`status = 'pending' and type <> 'webhook'`))
      .execute();
    await db.schema.dropIndex('workflow_action_runs_due_idx').execute();
  },
};
