import type { Migration } from './migration.ts';

/** Users, workspaces, memberships, sessions, one-time tokens, API keys, account data, mail outbox. */
export const identity: Migration = {
  name: '0001_identity',
  async up(db, { types: t }) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text')
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('email_verified_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('workspaces')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('access_token_ttl_seconds', 'integer', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('workspace_members')
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addPrimaryKeyConstraint('workspace_members_pk', ['workspace_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('workspace_members_user_idx')
      .on('workspace_members')
      .column('user_id')
      .execute();

    await db.schema
      .createTable('invitations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('invited_by', 'text')
      .addColumn('expires_at', t.timestamp, (c) => c.notNull())
      .addColumn('accepted_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('auth_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('refresh_jti', 'text', (c) => c.notNull())
      .addColumn('expires_at', t.timestamp, (c) => c.notNull())
      .addColumn('revoked_at', t.timestamp)
      .addColumn('revoked_reason', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('refreshed_at', t.timestamp)
      .execute();
    await db.schema.createIndex('auth_sessions_user_idx').on('auth_sessions').column('user_id').execute();

    await db.schema
      .createTable('one_time_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('expires_at', t.timestamp, (c) => c.notNull())
      .addColumn('used_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('created_by', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('scopes', t.json, (c) => c.notNull())
      .addColumn('expires_at', t.timestamp)
      .addColumn('last_used_at', t.timestamp)
      .addColumn('revoked_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('api_keys_workspace_idx')
      .on('api_keys')
      .columns(['workspace_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('account_settings')
      .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('timezone', 'text', (c) => c.notNull())
      .addColumn('email_notifications', t.boolean, (c) => c.notNull())
      .addColumn('notify_on', t.json, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('notifications')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('workspace_id', 'text', (c) => c.references('workspaces.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('data', t.json, (c) => c.notNull())
      .addColumn('read_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('notifications_user_idx')
      .on('notifications')
      .columns(['user_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('email_outbox')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('to_address', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('text_body', 'text', (c) => c.notNull())
      .addColumn('html_body', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('error_message', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('sent_at', t.timestamp)
      .execute();
  },
};
