import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/**
 * Operating deliveries (contract §5 "Operating deliveries", ADR 018): a delivery remembers the one
 * it repeats (a dead-letter retry or a resend), the deliveries of one geofence event are found by
 * an index, and a "retry every matching dead letter" request is a job stored here, so that any
 * node answers its progress and any node's job engine carries it on after a crash.
 */
export const deliveryOperations: Migration = {
  name: '0019_delivery_operations',
  async up(db, { types: t }) {
    // Null for every delivery made before, and for those that repeat nothing.
    await db.schema.alterTable('webhook_deliveries').addColumn('source_delivery_id', 'text').execute();
    // GET /webhooks/deliveries?event_id=: every delivery an event caused (retries and resends too;
    // the unique index of 0005 holds only the subscription's own delivery).
    await db.schema
      .createIndex('webhook_deliveries_event_row_idx')
      .on('webhook_deliveries')
      .columns(['event_row_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('webhook_dlq_retry_jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      // The filter as asked; a deleted webhook's entries keep their id, so no foreign key.
      .addColumn('webhook_id', 'text')
      .addColumn('event_type', 'text')
      .addColumn('from_at', t.timestamp)
      .addColumn('to_at', t.timestamp)
      .addColumn('error_contains', 'text')
      // The last entry (queued_at, id) of the set the job took on; null when it matched nothing.
      .addColumn('bound_queued_at', t.timestamp)
      .addColumn('bound_id', 'text')
      // The last entry handled, moved in the transaction that requeues its batch.
      .addColumn('cursor_queued_at', t.timestamp)
      .addColumn('cursor_id', 'text')
      .addColumn('matched', 'integer', (c) => c.notNull())
      .addColumn('queued', 'integer', (c) => c.notNull())
      .addColumn('failed', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('finished_at', t.timestamp)
      .addColumn('due_at', t.timestamp, (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .execute();
    // The job engine's claim reads only running jobs, in due order.
    await db.schema
      .createIndex('webhook_dlq_retry_jobs_due_idx')
      .on('webhook_dlq_retry_jobs')
      .columns(['due_at', 'id'])
      .where(sql.ref('status'), '=', 'running')
      .execute();
  },
};
