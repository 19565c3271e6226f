import type { Migration } from './migration.ts';

/** Subscriptions, invoices and usage series (contract §7). */
export const billing: Migration = {
  name: '0006_billing',
  async up(db, { types: t }) {
    await db.schema
      .createTable('subscriptions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('plan', 'text', (c) => c.notNull())
      .addColumn('custom_limits', t.json)
      .addColumn('custom_price_cents', 'integer')
      .addColumn('effective_from', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('subscriptions_workspace_from_idx')
      .on('subscriptions')
      .columns(['workspace_id', 'effective_from'])
      .execute();

    await db.schema
      .createTable('invoices')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('period_start', t.timestamp, (c) => c.notNull())
      .addColumn('period_end', t.timestamp, (c) => c.notNull())
      .addColumn('plan', 'text', (c) => c.notNull())
      .addColumn('amount_cents', 'integer', (c) => c.notNull())
      .addColumn('line_items', t.json, (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addUniqueConstraint('invoices_workspace_period_key', ['workspace_id', 'period'])
      .execute();

    await db.schema
      .createTable('usage_daily')
      // No foreign key: nodes flush counts late, and a deleted workspace must not fail their flush.
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('events', 'bigint', (c) => c.notNull())
      .addColumn('api_requests', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('usage_daily_pkey', ['workspace_id', 'day'])
      .execute();

    await db.schema
      .createTable('quota_notifications')
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('threshold', 'integer', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('quota_notifications_pkey', ['workspace_id', 'period', 'threshold'])
      .execute();
  },
};
