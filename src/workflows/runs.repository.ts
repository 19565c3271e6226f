/**
 * SQL of workflow runs (contract §6, ADR 014): what the outbox dispatcher reads to start runs
 * (enabled workflows whose trigger geofence exists, devices, webhooks), the run and action rows it
 * writes, the runs' status, and the reads of GET /workflows/{id}/runs.
 */
import { sql } from 'kysely';
import type { RowOf } from '../db/bulk-table.ts';
import { fromJson, toDate, toDateOrNull } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import { chunks } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import type { StoredRunContext } from './run-context.ts';
import { toWorkflow, type Workflow } from './workflows.repository.ts';
import {
  actionRunWrites,
  eventContextWrites,
  type RunOrigin,
  type RunStatus,
  runWrites,
} from './workflows.tables.ts';

/**
 * Enabled workflows of these workspaces whose trigger geofence still exists, by workspace: a
 * disabled or deleted workflow, or one whose geofence was deleted, starts no run from then on.
 */
export async function triggerableWorkflows(
  trx: Executor,
  workspaceIds: readonly string[],
): Promise<Map<string, Workflow[]>> {
  const out = new Map<string, Workflow[]>();
  if (workspaceIds.length === 0) return out;
  const rows = await trx
    .selectFrom('workflows as w')
    .innerJoin('geofences as g', (join) =>
      join.onRef('g.id', '=', 'w.geofence_id').onRef('g.workspace_id', '=', 'w.workspace_id'),
    )
    .select([
      'w.id',
      'w.workspace_id',
      'w.name',
      'w.description',
      'w.geofence_id',
      'w.event_types',
      'w.actions',
      'w.enabled',
      'w.created_at',
      'w.updated_at',
      'w.version',
    ])
    .where('w.workspace_id', 'in', [...workspaceIds])
    .where('w.enabled', '=', true)
    .orderBy('w.id')
    .execute();
  for (const row of rows) {
    const list = out.get(row.workspace_id) ?? [];
    list.push(toWorkflow(row));
    out.set(row.workspace_id, list);
  }
  return out;
}

export interface TemplateDevice {
  id: string;
  name: string;
  externalId: string | null;
  userId: string | null;
  metadata: Record<string, unknown>;
}

export async function devicesByIds(
  trx: Executor,
  ids: readonly string[],
): Promise<Map<string, TemplateDevice>> {
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom('devices')
    .select(['id', 'name', 'external_id', 'user_id', 'metadata'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(
    rows.map((r) => [
      r.id,
      {
        id: r.id,
        name: r.name,
        externalId: r.external_id,
        userId: r.user_id,
        metadata: fromJson<Record<string, unknown>>(r.metadata) ?? {},
      },
    ]),
  );
}

/** URL and method of webhooks named by `webhook` actions (a delivery row records both). */
export async function webhookRequests(
  trx: Executor,
  ids: readonly string[],
): Promise<Map<string, { url: string; method: string }>> {
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom('webhooks')
    .select(['id', 'url', 'method'])
    .where('id', 'in', [...ids])
    .execute();
  return new Map(rows.map((r) => [r.id, { url: r.url, method: r.method }]));
}

/** `event_row_id|workflow_id` pairs that have a run already (a re-dispatched outbox row). */
export async function existingEventRuns(trx: Executor, eventRowIds: readonly string[]): Promise<Set<string>> {
  if (eventRowIds.length === 0) return new Set();
  const rows = await trx
    .selectFrom('workflow_runs')
    .select(['event_row_id', 'workflow_id'])
    .where('event_row_id', 'in', [...eventRowIds])
    .where('origin', '=', 'event')
    .execute();
  return new Set(rows.map((r) => `${r.event_row_id}|${r.workflow_id}`));
}

export type EventContextRow = RowOf<typeof eventContextWrites>;
export type RunRow = RowOf<typeof runWrites>;
export type ActionRunRow = RowOf<typeof actionRunWrites>;

/** Event contexts first: runs point at them. */
export async function insertRuns(
  trx: Executor,
  capabilities: DialectCapabilities,
  contexts: readonly EventContextRow[],
  runs: readonly RunRow[],
  actions: readonly ActionRunRow[],
): Promise<void> {
  await eventContextWrites.insert(trx, capabilities, contexts);
  await runWrites.insert(trx, capabilities, runs);
  await actionRunWrites.insert(trx, capabilities, actions);
}

/**
 * The stored template contexts of these runs, by run id: a run's whole context (started before
 * migration 0017), or its event's shared one joined, with what the run row adds. A run gone
 * (its workflow deleted) has none.
 */
export async function runContexts(
  trx: Executor,
  runIds: readonly string[],
): Promise<Map<string, StoredRunContext>> {
  if (runIds.length === 0) return new Map();
  const rows = await trx
    .selectFrom('workflow_runs as r')
    .leftJoin('workflow_event_contexts as c', 'c.id', 'r.context_id')
    .select(['r.id', 'r.workflow_id', 'r.workflow_name', 'r.origin', 'r.context', 'c.context as shared'])
    .where('r.id', 'in', [...new Set(runIds)])
    .execute();
  const out = new Map<string, StoredRunContext>();
  for (const r of rows) {
    if (r.context !== null) out.set(r.id, { whole: r.context });
    else if (r.shared !== null) {
      out.set(r.id, {
        shared: r.shared,
        payloadId: r.id,
        workflow: { id: r.workflow_id, name: r.workflow_name ?? '' },
        test: r.origin === 'test',
      });
    }
  }
  return out;
}

/**
 * Of these event contexts, deletes those no run points at any more (their runs deleted, e.g. with
 * their workflow). Contexts are only ever pointed at by runs written with them, so one found
 * unused here stays unused.
 */
export async function deleteUnusedEventContexts(trx: Executor, ids: readonly string[]): Promise<number> {
  let deleted = 0;
  for (const part of chunks([...new Set(ids)], 1000)) {
    const result = await trx
      .deleteFrom('workflow_event_contexts')
      .where('id', 'in', part)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('workflow_runs as r')
              .select('r.id')
              .whereRef('r.context_id', '=', 'workflow_event_contexts.id'),
          ),
        ),
      )
      .executeTakeFirst();
    deleted += Number(result.numDeletedRows);
  }
  return deleted;
}

/** The event contexts the runs of a workflow point at (before the runs are deleted). */
export async function eventContextIdsOfWorkflow(
  trx: Executor,
  workspaceId: string,
  workflowId: string,
): Promise<string[]> {
  const rows = await trx
    .selectFrom('workflow_runs')
    .select('context_id')
    .distinct()
    .where('workspace_id', '=', workspaceId)
    .where('workflow_id', '=', workflowId)
    .where('context_id', 'is not', null)
    .execute();
  return rows.flatMap((r) => (r.context_id === null ? [] : [r.context_id]));
}

/**
 * Locks these runs (PostgreSQL), in id order, before their actions change. Two transactions that
 * finish sibling actions of one run then refresh its status one after the other, the second seeing
 * the first's write; without the lock each sees the other's action still pending (READ COMMITTED)
 * and the run stays `pending` for good. Runs before actions is also the order of a cascading
 * delete, so the two cannot deadlock. SQLite serialises writers instead.
 */
export async function lockRuns(
  trx: Executor,
  capabilities: DialectCapabilities,
  runIds: readonly string[],
): Promise<void> {
  if (!capabilities.rowLocks || runIds.length === 0) return;
  await trx
    .selectFrom('workflow_runs')
    .select('id')
    .where('id', 'in', [...new Set(runIds)])
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * Sets each run's status from its actions: `pending` while any is, else `failed` if one failed
 * for good, else `success`; `finished_at` when none is pending any more.
 */
export async function refreshRunStatus(trx: Executor, runIds: readonly string[], now: Date): Promise<void> {
  if (runIds.length === 0) return;
  const anyPending = sql`exists (select 1 from workflow_action_runs a where a.run_id = workflow_runs.id and a.status = 'pending')`;
  const anyFailed = sql`exists (select 1 from workflow_action_runs a where a.run_id = workflow_runs.id and a.status = 'failed')`;
  await trx
    .updateTable('workflow_runs')
    .set({
      status: sql<RunStatus>`case when ${anyPending} then 'pending' when ${anyFailed} then 'failed' else 'success' end`,
      finished_at: sql<Date | null>`case when ${anyPending} then null else coalesce(finished_at, ${now}) end`,
    })
    .where('id', 'in', [...new Set(runIds)])
    .execute();
}

/**
 * Writes the final status of the runs among these whose last action just ended — `failed` if one
 * failed for good, else `success` — and leaves the others untouched: a run is written once, when
 * it ends, not at every action (ADR 020). Callers hold the runs' locks (`lockRuns`).
 */
export async function finishRuns(trx: Executor, runIds: readonly string[], now: Date): Promise<void> {
  if (runIds.length === 0) return;
  const anyPending = sql`exists (select 1 from workflow_action_runs a where a.run_id = workflow_runs.id and a.status = 'pending')`;
  const anyFailed = sql`exists (select 1 from workflow_action_runs a where a.run_id = workflow_runs.id and a.status = 'failed')`;
  await trx
    .updateTable('workflow_runs')
    .set({
      status: sql<RunStatus>`case when ${anyFailed} then 'failed' else 'success' end`,
      finished_at: now,
    })
    .where('id', 'in', [...new Set(runIds)])
    .where('status', '=', 'pending')
    .where(sql<boolean>`not ${anyPending}`)
    .execute();
}

export interface RunRecord {
  id: string;
  workflowId: string;
  origin: RunOrigin;
  eventId: string;
  eventType: string;
  status: RunStatus;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface ActionRunRecord {
  id: string;
  runId: string;
  position: number;
  type: string;
  action: string;
  deliveryId: string | null;
  status: RunStatus;
  attemptCount: number;
  responseStatusCode: number | null;
  errorMessage: string | null;
  nextRetryAt: Date | null;
  finishedAt: Date | null;
  /** The attempt that ended the action, kept on its row (ADR 020); null otherwise. */
  endingAttempt: AttemptRecordRow | null;
}

export interface AttemptRecordRow {
  n: number;
  startedAt: Date;
  durationMs: number;
  responseStatusCode: number | null;
  errorMessage: string | null;
  responseExcerpt: string | null;
}

const RUN_SELECT = [
  'id',
  'workflow_id',
  'origin',
  'event_id',
  'event_type',
  'status',
  'created_at',
  'finished_at',
] as const;

function toRun(r: {
  id: string;
  workflow_id: string;
  origin: RunOrigin;
  event_id: string;
  event_type: string;
  status: RunStatus;
  created_at: Date | string;
  finished_at: Date | string | null;
}): RunRecord {
  return {
    id: r.id,
    workflowId: r.workflow_id,
    origin: r.origin,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    createdAt: toDate(r.created_at),
    finishedAt: toDateOrNull(r.finished_at),
  };
}

/** Runs of a workflow, newest first, optionally in one status. */
export async function listRuns(
  db: Executor,
  workspaceId: string,
  workflowId: string,
  status: RunStatus | undefined,
  offset: number,
  limit: number,
): Promise<{ runs: RunRecord[]; total: number }> {
  let rows = db
    .selectFrom('workflow_runs')
    .where('workspace_id', '=', workspaceId)
    .where('workflow_id', '=', workflowId);
  if (status !== undefined) rows = rows.where('status', '=', status);
  const [page, count] = await Promise.all([
    rows
      .select(RUN_SELECT)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute(),
    rows.select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { runs: page.map(toRun), total: Number(count.n) };
}

export async function findRun(
  db: Executor,
  workspaceId: string,
  workflowId: string,
  runId: string,
): Promise<RunRecord | undefined> {
  const row = await db
    .selectFrom('workflow_runs')
    .select(RUN_SELECT)
    .where('workspace_id', '=', workspaceId)
    .where('workflow_id', '=', workflowId)
    .where('id', '=', runId)
    .executeTakeFirst();
  return row ? toRun(row) : undefined;
}

/**
 * The actions of these runs, in position order. A `webhook` action answers its delivery's state
 * (the delivery engine owns it): status, attempts, last error and status code.
 */
export async function actionRunsOf(db: Executor, runIds: readonly string[]): Promise<ActionRunRecord[]> {
  if (runIds.length === 0) return [];
  const rows = await db
    .selectFrom('workflow_action_runs as a')
    .leftJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .select([
      'a.id',
      'a.run_id',
      'a.position',
      'a.type',
      'a.action',
      'a.delivery_id',
      'a.status',
      'a.attempt_count',
      'a.response_status_code',
      'a.error_message',
      'a.next_retry_at',
      'a.finished_at',
      'a.started_at',
      'a.duration_ms',
      'a.response_excerpt',
      'd.status as d_status',
      'd.attempt_count as d_attempt_count',
      'd.response_status_code as d_status_code',
      'd.error_message as d_error_message',
      'd.next_retry_at as d_next_retry_at',
    ])
    .where('a.run_id', 'in', [...runIds])
    .orderBy('a.run_id')
    .orderBy('a.position')
    .execute();
  return rows.map((r) => {
    const viaDelivery = r.delivery_id !== null && r.d_status !== null;
    return {
      id: r.id,
      runId: r.run_id,
      position: r.position,
      type: r.type,
      action: r.action,
      deliveryId: r.delivery_id,
      status: r.status,
      attemptCount: viaDelivery ? Number(r.d_attempt_count) : r.attempt_count,
      responseStatusCode: viaDelivery ? r.d_status_code : r.response_status_code,
      errorMessage: viaDelivery ? r.d_error_message : r.error_message,
      nextRetryAt: toDateOrNull(viaDelivery ? r.d_next_retry_at : r.next_retry_at),
      finishedAt: toDateOrNull(r.finished_at),
      endingAttempt:
        r.started_at === null || r.delivery_id !== null
          ? null
          : {
              n: r.attempt_count,
              startedAt: toDate(r.started_at),
              durationMs: Number(r.duration_ms ?? 0),
              responseStatusCode: r.response_status_code,
              errorMessage: r.error_message,
              responseExcerpt: r.response_excerpt,
            },
    };
  });
}

/** Attempts of these actions (a `webhook` action's are its delivery's), by action run id. */
export async function attemptsOf(
  db: Executor,
  actions: readonly ActionRunRecord[],
): Promise<Map<string, AttemptRecordRow[]>> {
  const out = new Map<string, AttemptRecordRow[]>();
  const own = actions.filter((a) => a.deliveryId === null).map((a) => a.id);
  const byDelivery = new Map(actions.flatMap((a) => (a.deliveryId ? [[a.deliveryId, a.id] as const] : [])));
  if (own.length > 0) {
    const rows = await db
      .selectFrom('workflow_action_attempts')
      .selectAll()
      .where('action_run_id', 'in', own)
      // A retried action starts again at n = 1: time orders its attempts.
      .orderBy('started_at')
      .orderBy('n')
      .execute();
    for (const r of rows) {
      const list = out.get(r.action_run_id) ?? [];
      list.push({
        n: r.n,
        startedAt: toDate(r.started_at),
        durationMs: Number(r.duration_ms),
        responseStatusCode: r.response_status_code,
        errorMessage: r.error_message,
        responseExcerpt: r.response_excerpt,
      });
      out.set(r.action_run_id, list);
    }
  }
  // The attempt that ended an action is on its row, after any that were retried.
  for (const a of actions) {
    if (a.deliveryId !== null || a.endingAttempt === null) continue;
    const list = out.get(a.id) ?? [];
    list.push(a.endingAttempt);
    out.set(a.id, list);
  }
  if (byDelivery.size > 0) {
    const rows = await db
      .selectFrom('webhook_delivery_attempts')
      .selectAll()
      .where('delivery_id', 'in', [...byDelivery.keys()])
      .orderBy('delivery_id')
      .orderBy('n')
      .execute();
    for (const r of rows) {
      const actionId = byDelivery.get(r.delivery_id);
      if (actionId === undefined) continue;
      const list = out.get(actionId) ?? [];
      list.push({
        n: r.n,
        startedAt: toDate(r.started_at),
        durationMs: Number(r.duration_ms),
        responseStatusCode: r.response_status_code,
        errorMessage: r.error_message,
        responseExcerpt: r.response_body_excerpt,
      });
      out.set(actionId, list);
    }
  }
  return out;
}
