import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/** Webhook deliveries, their attempts, the dead-letter queue and rate windows (contract §5, ADR 010). */
export const webhookDeliveries: Migration = {
  name: '0005_webhook_deliveries',
  async up(db, { types: t }) {
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('webhook_id', 'text', (c) => c.references('webhooks.id').onDelete('set null'))
      .addColumn('origin', 'text', (c) => c.notNull())
      // Events are history without foreign keys (ADR 008); the workspace cascade covers deletion.
      .addColumn('event_row_id', 'text')
      .addColumn('geofence_id', 'text')
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempt_count', 'integer', (c) => c.notNull())
      .addColumn('response_status_code', 'integer')
      .addColumn('response_time_ms', t.double)
      .addColumn('error_message', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('delivered_at', t.timestamp)
      .addColumn('next_retry_at', t.timestamp)
      .addColumn('due_at', t.timestamp, (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .execute();
    // The worker's queue: only pending rows, in due order (ids break ties in event order).
    await db.schema
      .createIndex('webhook_deliveries_due_idx')
      .on('webhook_deliveries')
      .columns(['due_at', 'id'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();
    // A re-dispatched outbox row cannot double a subscription's delivery (ADR 008).
    await db.schema
      .createIndex('webhook_deliveries_event_webhook_uq')
      .on('webhook_deliveries')
      .columns(['event_row_id', 'webhook_id'])
      .unique()
      .where(sql.ref('origin'), '=', 'subscription')
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_webhook_created_idx')
      .on('webhook_deliveries')
      .columns(['webhook_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('webhook_delivery_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('delivery_id', 'text', (c) =>
        c.notNull().references('webhook_deliveries.id').onDelete('cascade'),
      )
      .addColumn('n', 'integer', (c) => c.notNull())
      .addColumn('started_at', t.timestamp, (c) => c.notNull())
      .addColumn('duration_ms', t.double, (c) => c.notNull())
      .addColumn('response_status_code', 'integer')
      .addColumn('error_message', 'text')
      .addColumn('response_body_excerpt', 'text')
      .execute();
    await db.schema
      .createIndex('webhook_delivery_attempts_delivery_idx')
      .on('webhook_delivery_attempts')
      .columns(['delivery_id', 'n'])
      .execute();

    await db.schema
      .createTable('webhook_dead_letters')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('delivery_id', 'text', (c) =>
        c.notNull().unique().references('webhook_deliveries.id').onDelete('cascade'),
      )
      .addColumn('webhook_id', 'text')
      .addColumn('webhook_name', 'text', (c) => c.notNull())
      .addColumn('webhook_url', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('error_message', 'text', (c) => c.notNull())
      .addColumn('retry_count', 'integer', (c) => c.notNull())
      .addColumn('last_attempt_at', t.timestamp, (c) => c.notNull())
      .addColumn('queued_at', t.timestamp, (c) => c.notNull())
      .addColumn('requeued', t.boolean, (c) => c.notNull())
      .addColumn('requeued_at', t.timestamp)
      .execute();
    await db.schema
      .createIndex('webhook_dead_letters_workspace_queued_idx')
      .on('webhook_dead_letters')
      .columns(['workspace_id', 'queued_at'])
      .execute();

    await db.schema
      .createTable('webhook_rate_windows')
      .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
      .addColumn('second', 'bigint', (c) => c.notNull())
      .addColumn('sends', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_rate_windows_pk', ['webhook_id', 'second'])
      .execute();
  },
};
