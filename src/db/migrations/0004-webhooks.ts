import type { Migration } from './migration.ts';

/** Webhook endpoints (contract §5). Deliveries, attempts and dead letters: 0005. */
export const webhooks: Migration = {
  name: '0004_webhooks',
  async up(db, { types: t }) {
    await db.schema
      .createTable('webhooks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('timeout_seconds', 'integer', (c) => c.notNull())
      .addColumn('headers', t.json, (c) => c.notNull())
      .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull())
      .addColumn('events', t.json, (c) => c.notNull())
      .addColumn('geofence_ids', t.json)
      .addColumn('enabled', t.boolean, (c) => c.notNull())
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('webhooks_workspace_created_idx')
      .on('webhooks')
      .columns(['workspace_id', 'created_at'])
      .execute();
  },
};
