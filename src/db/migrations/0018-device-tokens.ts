import type { Migration } from './migration.ts';

/**
 * Device tokens (contract §2.3b): stored as a SHA-256 like API keys, found by that hash when a
 * request presents one. A token belongs to its device: deleting the device deletes its tokens, so
 * a deleted device's phone is locked out without a separate revocation.
 */
export const deviceTokens: Migration = {
  name: '0018_device_tokens',
  async up(db, { types: t }) {
    await db.schema
      .createTable('device_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('device_id', 'text', (c) => c.notNull().references('devices.id').onDelete('cascade'))
      .addColumn('name', 'text')
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('last_used_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('device_tokens_device_idx')
      .on('device_tokens')
      .columns(['device_id', 'created_at'])
      .execute();
  },
};
