/**
 * The `database` action (contract §6): the event as one row of the customer's PostgreSQL table,
 * `(event_id, event_type, payload, created_at)`, the table created if absent. The pools, the SSRF
 * guard and the error wording are the runtime's `DatabaseTargets` (database-targets.ts).
 *
 * `created_at` is when the row is written, by our clock: the row belongs to the customer's table,
 * where it records when it arrived; when the event happened is in the payload (`occurred_at`). A
 * retried attempt therefore writes its own time, as it writes its own row.
 */
import type { ActionConfigs } from '../action-configs.schemas.ts';
import type { ActionExecutor, ActionOutcome } from './action.ts';

export const databaseAction: ActionExecutor<ActionConfigs['database']> = {
  async execute(config, context, runtime) {
    if (!config.connection_url) return failure('No connection URL is configured; nothing was inserted');
    try {
      const id = await runtime.databases.insertEvent(config.connection_url, config.table, {
        eventId: context.event_id,
        eventType: context.event,
        payload: context.payload_json,
        createdAt: new Date(),
      });
      return {
        success: true,
        statusCode: null,
        errorMessage: null,
        responseExcerpt: JSON.stringify({ table: config.table, id }),
      };
    } catch (error) {
      // DatabaseTargets words its errors without secrets; anything else is reported by kind only.
      return failure(
        error instanceof Error && error.name === 'DatabaseTargetError' ? error.message : unexpected(error),
      );
    }
  },
};

function unexpected(error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  return `The row could not be inserted (${name})`;
}

function failure(errorMessage: string): ActionOutcome {
  return { success: false, statusCode: null, errorMessage, responseExcerpt: null };
}
