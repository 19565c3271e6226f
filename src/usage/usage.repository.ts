/** SQL for the monthly event usage counters. */
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
  db: Executor,
  workspaceId: string,
  period: string,
  events: number,
  shard: number = Math.floor(Math.random() * USAGE_SHARDS),
): Promise<void> {
  if (events <= 0) return;
  await db
    .insertInto('usage_counters')
    .values({ workspace_id: workspaceId, period, shard, events })
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'period', 'shard'])
        .doUpdateSet((eb) => ({ events: eb('usage_counters.events', '+', eb.ref('excluded.events')) })),
    )
    .execute();
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
