/**
 * Whether a workspace's events have anyone to be dispatched to: an enabled webhook or an enabled
 * workflow. Ingestion asks inside its transaction; events of a workspace with neither are stored
 * already dispatched, so the dispatcher has no transaction to run for them (ADR 010, "Dispatch").
 */
import type { Executor } from '../db/transaction.ts';

export async function hasEventRecipients(db: Executor, workspaceId: string): Promise<boolean> {
  const row = await db
    .selectFrom('webhooks')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('enabled', '=', true)
    .unionAll(
      db
        .selectFrom('workflows')
        .select('id')
        .where('workspace_id', '=', workspaceId)
        .where('enabled', '=', true),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
