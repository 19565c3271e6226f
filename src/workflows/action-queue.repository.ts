/**
 * The workflow queue's SQL (ADR 014, the mechanics of ADR 010): claiming due action jobs with a
 * lease, recording attempt outcomes where the lease is still held, giving leases back, and
 * settling `webhook` actions from their deliveries' outcomes. Each call runs in the caller's
 * transaction; every write that finishes an action also refreshes its run's status.
 */
import { type SqlBool, sql } from 'kysely';
import { updateNamedById } from '../db/bulk-table.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import { afterAttempt } from '../jobs/retry-schedule.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { ActionOutcome } from './actions/action.ts';
import type { StoredRunContext } from './run-context.ts';
import { finishRuns, lockRuns, runContexts } from './runs.repository.ts';
import { attemptWrites } from './workflows.tables.ts';

/**
 * The worker's own jobs: pending actions of every type but `webhook` (those are deliveries, and a
 * pending one always has its delivery). Said with `type`, not `delivery_id is null`: SQLite,
 * without statistics, would take the `delivery_id` index for `is null`, read every job ever run
 * and sort them on each claim (11 ms at 30,000 finished runs, growing with history) instead of
 * walking the due index (0.2 ms).
 */
const pendingJob = sql<SqlBool>`status = 'pending' and type <> 'webhook'`;

export interface ClaimedAction {
  id: string;
  runId: string;
  workspaceId: string;
  workflowId: string;
  position: number;
  type: string;
  /** The stored action (JSON text, secrets sealed). */
  action: string;
  /** The template context of the run as stored (parsed when the action runs: `parseRunContext`). */
  context: StoredRunContext;
  /** The attempt about to be made (1-based). */
  attempt: number;
}

/**
 * Leases up to `limit` due jobs to `workerId` until `leaseUntil`. On PostgreSQL they are taken
 * `FOR UPDATE SKIP LOCKED`: workers of several processes take disjoint jobs without waiting.
 */
export async function claimDueActions(
  trx: Executor,
  capabilities: DialectCapabilities,
  options: {
    now: Date;
    workerId: string;
    limit: number;
    leaseUntil: Date;
    types?: readonly string[] | undefined;
  },
): Promise<ClaimedAction[]> {
  let query = trx
    .selectFrom('workflow_action_runs')
    .select(['id', 'run_id', 'workspace_id', 'workflow_id', 'position', 'type', 'action', 'attempt_count'])
    .where(pendingJob)
    .where('due_at', '<=', options.now)
    .orderBy('due_at')
    .orderBy('id')
    .limit(options.limit);
  if (options.types) query = query.where('type', 'in', [...options.types]);
  if (capabilities.skipLocked) query = query.forUpdate().skipLocked();
  const due = await query.execute();
  if (due.length === 0) return [];
  const ids = due.map((d) => d.id);
  await trx
    .updateTable('workflow_action_runs')
    .set({ due_at: options.leaseUntil, lease_owner: options.workerId })
    .where('id', 'in', ids)
    .execute();
  const contexts = await runContexts(
    trx,
    due.map((d) => d.run_id),
  );
  return due.flatMap((d) => {
    const context = contexts.get(d.run_id);
    if (context === undefined) return [];
    return [
      {
        id: d.id,
        runId: d.run_id,
        workspaceId: d.workspace_id,
        workflowId: d.workflow_id,
        position: d.position,
        type: d.type,
        action: d.action,
        context,
        // attempt_count moves only when an outcome is recorded: a lease that runs out repeats it.
        attempt: d.attempt_count + 1,
      },
    ];
  });
}

export interface ActionAttempt {
  job: ClaimedAction;
  startedAt: Date;
  finishedAt: Date;
  durationMs: number;
  outcome: ActionOutcome;
}

/** An action that failed for good in a recorded batch (its owners are notified). */
export interface FailedAction {
  job: ClaimedAction;
  errorMessage: string;
}

/** Columns an outcome sets on the action's row. */
const OUTCOME_COLUMNS = {
  status: 'text',
  attempt_count: 'integer',
  response_status_code: 'integer',
  error_message: 'text',
  finished_at: 'timestamp',
  next_retry_at: 'timestamp',
  due_at: 'timestamp',
  lease_owner: 'text',
  started_at: 'timestamp',
  duration_ms: 'double',
  response_excerpt: 'text',
} as const;

/**
 * Records outcomes where `workerId` still holds the lease (a worker whose lease ran out lost the
 * job to another and must not overwrite its record). A failure before the last attempt waits
 * `scheduleMs[n-1]` from the failure; the last one, or one marked `final`, fails the action for good.
 *
 * Rows per action (ADR 020): the attempt that ends the action is kept on the action's row; only an
 * attempt followed by a retry gets a row of its own. The run is written once, when its last
 * action ends (`finishRuns`).
 */
export async function recordActionAttempts(
  trx: Executor,
  capabilities: DialectCapabilities,
  workerId: string,
  scheduleMs: readonly number[],
  attempts: readonly ActionAttempt[],
): Promise<FailedAction[]> {
  if (attempts.length === 0) return [];
  await lockRuns(
    trx,
    capabilities,
    attempts.map((a) => a.job.runId),
  );
  const next = new Map(
    attempts.map((a) => [a.job.id, afterAttempt(scheduleMs, a.job.attempt, a.finishedAt, a.outcome)]),
  );
  const ends = (a: ActionAttempt) => next.get(a.job.id)?.ended !== false;
  const rows = attempts.map((a) => {
    const { job, finishedAt, outcome } = a;
    const n = job.attempt;
    const { statusCode } = outcome;
    const step = next.get(job.id);
    if (step === undefined || step.ended) {
      return {
        id: job.id,
        status: outcome.success ? 'success' : 'failed',
        attempt_count: n,
        response_status_code: statusCode,
        error_message: outcome.success ? null : outcome.errorMessage,
        finished_at: finishedAt,
        next_retry_at: null,
        due_at: finishedAt,
        lease_owner: null,
        started_at: a.startedAt,
        duration_ms: a.durationMs,
        response_excerpt: outcome.responseExcerpt,
      };
    }
    return {
      id: job.id,
      status: 'pending',
      attempt_count: n,
      response_status_code: statusCode,
      error_message: outcome.errorMessage,
      finished_at: null,
      next_retry_at: step.retryAt,
      due_at: step.retryAt,
      lease_owner: null,
      started_at: null,
      duration_ms: null,
      response_excerpt: null,
    };
  });
  const updated = new Set(
    await updateNamedById(trx, capabilities, {
      table: 'workflow_action_runs',
      columns: OUTCOME_COLUMNS,
      rows,
      guard: { column: 'lease_owner', value: workerId },
    }),
  );
  const kept = attempts.filter((a) => updated.has(a.job.id));
  await insertAttemptRows(
    trx,
    capabilities,
    kept
      .filter((a) => !ends(a))
      .map((a) => ({
        actionRunId: a.job.id,
        n: a.job.attempt,
        startedAt: a.startedAt,
        durationMs: a.durationMs,
        responseStatusCode: a.outcome.statusCode,
        errorMessage: a.outcome.errorMessage,
        responseExcerpt: a.outcome.responseExcerpt,
      })),
  );
  const finished = kept.filter(ends);
  await finishRuns(
    trx,
    finished.map((a) => a.job.runId),
    attempts[0]?.finishedAt ?? new Date(0),
  );
  return finished
    .filter((a) => !a.outcome.success)
    .map((a) => ({ job: a.job, errorMessage: a.outcome.errorMessage ?? 'The action failed' }));
}

export interface AttemptRow {
  actionRunId: string;
  n: number;
  startedAt: Date;
  durationMs: number;
  responseStatusCode: number | null;
  errorMessage: string | null;
  responseExcerpt: string | null;
}

/** Rows of `workflow_action_attempts`: attempts followed by a retry (and, on a run's retry, the ending one). */
export async function insertAttemptRows(
  trx: Executor,
  capabilities: DialectCapabilities,
  rows: readonly AttemptRow[],
): Promise<void> {
  await attemptWrites.insert(
    trx,
    capabilities,
    rows.map((r) => ({
      id: uuidv7(),
      action_run_id: r.actionRunId,
      n: r.n,
      started_at: r.startedAt,
      duration_ms: r.durationMs,
      response_status_code: r.responseStatusCode,
      error_message: r.errorMessage,
      response_excerpt: r.responseExcerpt,
    })),
  );
}

/** Gives back leases of claimed jobs that were never attempted (a worker stopping): due at once. */
export async function releaseActionLeases(
  db: Executor,
  workerId: string,
  ids: readonly string[],
  now: Date,
): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('workflow_action_runs')
    .set({ due_at: now, lease_owner: null })
    .where('id', 'in', [...ids])
    .where('lease_owner', '=', workerId)
    .where(pendingJob)
    .execute();
}

/** A delivery of a `webhook` action whose outcome is final. */
export interface SettledDelivery {
  deliveryId: string;
  success: boolean;
  finishedAt: Date;
}

/**
 * `webhook` actions follow their deliveries: a delivery that succeeded or failed for good settles
 * its action and refreshes the run. Called in the transaction that records the delivery outcome.
 */
export async function settleWebhookActions(
  trx: Executor,
  capabilities: DialectCapabilities,
  settled: readonly SettledDelivery[],
): Promise<void> {
  if (settled.length === 0) return;
  const owners = await trx
    .selectFrom('workflow_action_runs')
    .select('run_id')
    .where(
      'delivery_id',
      'in',
      settled.map((s) => s.deliveryId),
    )
    .execute();
  await lockRuns(
    trx,
    capabilities,
    owners.map((o) => o.run_id),
  );
  const runIds: string[] = [];
  for (const success of [true, false]) {
    const ids = settled.filter((s) => s.success === success).map((s) => s.deliveryId);
    if (ids.length === 0) continue;
    const rows = await trx
      .updateTable('workflow_action_runs')
      .set({ status: success ? 'success' : 'failed', finished_at: settled[0]?.finishedAt ?? null })
      .where('delivery_id', 'in', ids)
      .where('status', '=', 'pending')
      .returning('run_id')
      .execute();
    runIds.push(...rows.map((r) => r.run_id));
  }
  await finishRuns(trx, runIds, settled[0]?.finishedAt ?? new Date(0));
}
