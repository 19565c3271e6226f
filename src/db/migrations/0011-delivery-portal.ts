import type { Migration } from './migration.ts';

/**
 * The delivery portal (ADR 018): each attempt keeps the request headers it was sent with, and the
 * workspace-wide delivery list reads an index of its own instead of scanning the table.
 */
export const deliveryPortal: Migration = {
  name: '0011_delivery_portal',
  async up(db) {
    // JSON text on both databases, not jsonb: jsonb reorders an object's keys, and the record
    // should show the headers in the order they were sent. Null for attempts made before this.
    await db.schema.alterTable('webhook_delivery_attempts').addColumn('request_headers', 'text').execute();
    // The delivery lists read a range of one of these in the order they answer (created_at, then
    // id, descending): GET /webhooks/deliveries the workspace's, with `webhook_id` the webhook's.
    await db.schema
      .createIndex('webhook_deliveries_workspace_created_idx')
      .on('webhook_deliveries')
      .columns(['workspace_id', 'created_at', 'id'])
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_webhook_created_id_idx')
      .on('webhook_deliveries')
      .columns(['webhook_id', 'created_at', 'id'])
      .execute();
    // It covers every use of the (webhook_id, created_at) index of 0005.
    await db.schema.dropIndex('webhook_deliveries_webhook_created_idx').execute();
  },
};
