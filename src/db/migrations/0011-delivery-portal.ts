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
    // GET /webhooks/deliveries: one workspace, newest first, optionally a created_at range.
    await db.schema
      .createIndex('webhook_deliveries_workspace_created_idx')
      .on('webhook_deliveries')
      .columns(['workspace_id', 'created_at', 'id'])
      .execute();
  },
};
