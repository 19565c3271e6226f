/**
 * The outbox's own SQL (ADR 008 "The outbox"): the undispatched `event_outbox` rows and the mark
 * that they are done. Both run in the dispatcher's one transaction per batch.
 */
import { type SqlBool, sql } from 'kysely';
import type { DialectCapabilities } from '../db/database.ts';
import { sendWithCommit } from '../db/postgres-driver.ts';
import type { Executor } from '../db/transaction.ts';

const undispatched = sql<SqlBool>`dispatched_at is null`;

export interface OutboxRow {
  id: string;
  eventRowId: string;
  workspaceId: string;
}

/**
 * Up to `limit` undispatched outbox rows, oldest first. On PostgreSQL they are taken `FOR UPDATE
 * SKIP LOCKED`: dispatchers of several processes take disjoint rows without waiting.
 */
export async function takeUndispatched(
  trx: Executor,
  capabilities: DialectCapabilities,
  limit: number,
): Promise<OutboxRow[]> {
  let query = trx
    .selectFrom('event_outbox')
    .select(['id', 'event_row_id', 'workspace_id'])
    .where(undispatched)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit);
  if (capabilities.skipLocked) query = query.forUpdate().skipLocked();
  const rows = await query.execute();
  return rows.map((r) => ({ id: r.id, eventRowId: r.event_row_id, workspaceId: r.workspace_id }));
}

/**
 * Marks outbox rows dispatched. Meant as the transaction's last statement: on PostgreSQL it then
 * travels with the COMMIT (`sendWithCommit`) instead of costing a round trip of its own.
 */
export async function markDispatched(trx: Executor, ids: readonly string[], now: Date): Promise<void> {
  const statement = trx
    .updateTable('event_outbox')
    .set({ dispatched_at: now })
    .where('id', 'in', [...ids])
    .compile();
  await trx.executeQuery(sendWithCommit(statement));
}
