/** SQL for the monthly event usage counters. */

import type { DialectCapabilities } from '../db/database.ts';
import { type StatementRunner, statement } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';

/** 'YYYY-MM' of `at` in UTC: the calendar month an event is billed to. */
export function usagePeriod(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** Counter rows per workspace and month (migration 0008). */
export const USAGE_SHARDS = 8;

/**
 * Adds `events` to the workspace's counter of `period`. Run in the transaction that writes the
 * events, so the count never disagrees with them. The upsert's row lock is held until COMMIT, so
 * each call picks one of USAGE_SHARDS rows at random: concurrent ingestion transactions of one
 * workspace (PostgreSQL) rarely meet on the same row and commit side by side instead of in turn.
 */
export async function addEventUsage(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  workspaceId: string,
  period: string,
  events: number,
  shard: number = Math.floor(Math.random() * USAGE_SHARDS),
): Promise<void> {
  if (events <= 0) return;
  // Hand-built (the same upsert on both dialects), so that ingestion can send it with its other
  // writes through a plain statement runner (src/db/writes-with-commit.ts).
  const upsert = statement(capabilities)
    .sql('insert into usage_counters (workspace_id, period, shard, events) values (')
    .list([workspaceId, period, shard, events])
    .sql(
      ') on conflict (workspace_id, period, shard) do update set events = usage_counters.events + excluded.events',
    );
  await db.executeQuery(upsert.compile());
}

export async function eventUsage(db: Executor, workspaceId: string, period: string): Promise<number> {
  const row = await db
    .selectFrom('usage_counters')
    .select((eb) => eb.fn.sum<number | string | null>('events').as('events'))
    .where('workspace_id', '=', workspaceId)
    .where('period', '=', period)
    .executeTakeFirst();
  return row?.events == null ? 0 : Number(row.events);
}
