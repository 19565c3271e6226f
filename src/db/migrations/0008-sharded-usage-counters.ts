import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/**
 * `usage_counters` gets a `shard` column in its key (ADR 008, "Usage counter shards"). The counter
 * row of a workspace's month was the one row every ingestion transaction of the workspace updated:
 * on PostgreSQL concurrent transactions (batches, group commits) queued on its row lock, each
 * holding it through its COMMIT, so they committed one after another. Each transaction now adds to
 * one of a few rows of the month, and readers sum them. Rows are copied into shard 0.
 */
export const shardedUsageCounters: Migration = {
  name: '0008_sharded_usage_counters',
  async up(db) {
    await db.schema
      .createTable('usage_counters_sharded')
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      // 'YYYY-MM' in UTC.
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('shard', 'integer', (c) => c.notNull())
      .addColumn('events', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('usage_counters_shard_pk', ['workspace_id', 'period', 'shard'])
      .execute();
    await sql`
      insert into usage_counters_sharded (workspace_id, period, shard, events)
      select workspace_id, period, 0, events from usage_counters`.execute(db);
    await sql`drop table usage_counters`.execute(db);
    await sql`alter table usage_counters_sharded rename to usage_counters`.execute(db);
  },
};
