/**
 * SQL for a webhook's health (GET /webhooks/{webhook_id}/health, ADR 018): its attempts in a time
 * window. An attempt succeeded when it got a 2xx answer, the delivery worker's own rule.
 */
import { type SqlBool, sql } from 'kysely';
import { toDate } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';

export interface HealthWindow {
  workspaceId: string;
  webhookId: string;
  /** Attempts started in [since, until]. */
  since: Date;
  until: Date;
  /**
   * Deliveries created before this are not read: the attempts come through the webhook's
   * `(webhook_id, created_at, id)` index, not a scan of its whole history.
   */
  createdSince: Date;
}

export interface RecentAttempt {
  startedAt: Date;
  durationMs: number;
  success: boolean;
  errorMessage: string | null;
  responseStatusCode: number | null;
}

const succeeded = sql<SqlBool>`a.response_status_code >= 200 and a.response_status_code < 300`;
/** No answer, or one that is not 2xx: the negation of `succeeded`, written for SQL's null. */
const failed = sql<SqlBool>`(a.response_status_code is null or a.response_status_code < 200 or a.response_status_code >= 300)`;

function attemptsIn(db: Executor, w: HealthWindow) {
  return db
    .selectFrom('webhook_delivery_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .where('d.webhook_id', '=', w.webhookId)
    .where('d.workspace_id', '=', w.workspaceId)
    .where('d.created_at', '>=', w.createdSince)
    .where('a.started_at', '>=', w.since)
    .where('a.started_at', '<=', w.until);
}

/** How many attempts the window holds, and how many of them succeeded (every one counted). */
export async function countAttempts(
  db: Executor,
  w: HealthWindow,
): Promise<{ attempts: number; successes: number }> {
  const row = await attemptsIn(db, w)
    .select((eb) => [
      eb.fn.countAll<number>().as('n'),
      eb.fn.sum<number>(eb.case().when(succeeded).then(1).else(0).end()).as('ok'),
    ])
    .executeTakeFirstOrThrow();
  return { attempts: Number(row.n), successes: Number(row.ok ?? 0) };
}

/** The window's most recent `limit` attempts, newest first (ties broken by attempt number). */
export async function recentAttempts(db: Executor, w: HealthWindow, limit: number): Promise<RecentAttempt[]> {
  const rows = await attemptsIn(db, w)
    .select(['a.started_at', 'a.duration_ms', 'a.response_status_code', 'a.error_message'])
    .orderBy('a.started_at', 'desc')
    .orderBy('a.n', 'desc')
    .orderBy('a.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    startedAt: toDate(r.started_at),
    durationMs: Number(r.duration_ms),
    success: r.response_status_code !== null && r.response_status_code >= 200 && r.response_status_code < 300,
    errorMessage: r.error_message,
    responseStatusCode: r.response_status_code,
  }));
}

/** The window's most recent failed attempt, if any. */
export async function lastFailure(db: Executor, w: HealthWindow): Promise<RecentAttempt | undefined> {
  const row = await attemptsIn(db, w)
    .where(failed)
    .select(['a.started_at', 'a.duration_ms', 'a.response_status_code', 'a.error_message'])
    .orderBy('a.started_at', 'desc')
    .orderBy('a.n', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    startedAt: toDate(row.started_at),
    durationMs: Number(row.duration_ms),
    success: false,
    errorMessage: row.error_message,
    responseStatusCode: row.response_status_code,
  };
}
