/** SQL for the daily usage series (events, API-key requests) behind GET /subscriptions/usage. */
import type { Db } from '../db/database.ts';
import { type Executor, withTransaction } from '../db/transaction.ts';

/** Rows per statement: 4 parameters each stays far below SQLite's and PostgreSQL's limits. */
const CHUNK = 1000;

export interface DailyIncrement {
  workspaceId: string;
  day: string;
  events: number;
  apiRequests: number;
}

/**
 * Adds a node's flushed counts to the shared rows (an upsert that adds, so nodes never overwrite
 * each other), in chunks within one transaction: all of a flush lands, or none of it.
 */
export async function addDailyUsage(db: Db, increments: readonly DailyIncrement[]): Promise<void> {
  if (increments.length === 0) return;
  await withTransaction(db, async (trx) => {
    for (let i = 0; i < increments.length; i += CHUNK) {
      await trx
        .insertInto('usage_daily')
        .values(
          increments.slice(i, i + CHUNK).map((row) => ({
            workspace_id: row.workspaceId,
            day: row.day,
            events: row.events,
            api_requests: row.apiRequests,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['workspace_id', 'day']).doUpdateSet((eb) => ({
            events: eb('usage_daily.events', '+', eb.ref('excluded.events')),
            api_requests: eb('usage_daily.api_requests', '+', eb.ref('excluded.api_requests')),
          })),
        )
        .execute();
    }
  });
}

export async function dailyUsage(
  db: Executor,
  workspaceId: string,
  fromDay: string,
  toDay: string,
): Promise<Map<string, { events: number; apiRequests: number }>> {
  const rows = await db
    .selectFrom('usage_daily')
    .select(['day', 'events', 'api_requests'])
    .where('workspace_id', '=', workspaceId)
    .where('day', '>=', fromDay)
    .where('day', '<=', toDay)
    .execute();
  return new Map(rows.map((r) => [r.day, { events: Number(r.events), apiRequests: Number(r.api_requests) }]));
}
