/** SQL of a run's retry (contract §6): the failed actions back in the queue with a fresh count. */
import type { Executor } from '../db/transaction.ts';
import type { StoredAction } from './action-secrets.ts';

export interface RequeuedAction {
  id: string;
  action: StoredAction;
  /** A `webhook` action's new delivery. */
  deliveryId: string | null;
  /** Set when the action cannot run again (its webhook was deleted): it stays failed. */
  error: string | null;
}

/**
 * Callers first keep the attempt that ended each action as an attempt row (`insertAttemptRows`):
 * the columns that held it on the action's row are cleared here.
 */
export async function requeueActions(
  trx: Executor,
  actions: readonly RequeuedAction[],
  now: Date,
): Promise<void> {
  for (const a of actions) {
    await trx
      .updateTable('workflow_action_runs')
      .set(
        a.error === null
          ? {
              action: JSON.stringify(a.action),
              delivery_id: a.deliveryId,
              status: 'pending',
              attempt_count: 0,
              response_status_code: null,
              error_message: null,
              finished_at: null,
              next_retry_at: null,
              due_at: now,
              lease_owner: null,
              started_at: null,
              duration_ms: null,
              response_excerpt: null,
            }
          : {
              error_message: a.error,
              finished_at: now,
              started_at: null,
              duration_ms: null,
              response_excerpt: null,
            },
      )
      .where('id', '=', a.id)
      .where('status', '=', 'failed')
      .execute();
  }
}
