/** SQL for the monthly event usage counters. */
import type { Executor } from '../db/transaction.ts';

/** 'YYYY-MM' of `at` in UTC: the calendar month an event is billed to. */
export function usagePeriod(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/**
 * Adds `events` to the workspace's counter of `period`. Run in the transaction that writes the
 * events, so the count never disagrees with them; the upsert's row lock serialises concurrent
 * writers on PostgreSQL.
 */
export async function addEventUsage(
  db: Executor,
  workspaceId: string,
  period: string,
  events: number,
): Promise<void> {
  if (events <= 0) return;
  await db
    .insertInto('usage_counters')
    .values({ workspace_id: workspaceId, period, events })
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'period'])
        .doUpdateSet((eb) => ({ events: eb('usage_counters.events', '+', eb.ref('excluded.events')) })),
    )
    .execute();
}

export async function eventUsage(db: Executor, workspaceId: string, period: string): Promise<number> {
  const row = await db
    .selectFrom('usage_counters')
    .select('events')
    .where('workspace_id', '=', workspaceId)
    .where('period', '=', period)
    .executeTakeFirst();
  return row ? Number(row.events) : 0;
}
