/**
 * Workflow runs (contract §6): listing them with their actions, one run with every attempt, a
 * test run with a sample event, and the retry of a run's actions that failed for good.
 */
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { findGeofence } from '../geofences/geofences.repository.ts';
import type { JobSignals } from '../jobs/wake-signal.ts';
import type { Clock } from '../shared/clock.ts';
import { BadRequestError, NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { insertAttemptRows } from './action-queue.repository.ts';
import type { StoredAction } from './action-secrets.ts';
import { parseRunContext } from './run-context.ts';
import { requeueActions } from './run-retry.repository.ts';
import { buildEventContext, buildRun, emptyRunRows, insertRunRows } from './run-starter.ts';
import {
  type ActionRunRecord,
  type AttemptRecordRow,
  actionRunsOf,
  attemptsOf,
  findRun,
  listRuns as listRunRows,
  lockRuns,
  type RunRecord,
  refreshRunStatus,
  runContexts,
  webhookRequests,
} from './runs.repository.ts';
import { SAMPLE_DEVICE, sampleEvent } from './sample-event.ts';
import type { WebhookActionDeliveries, WebhookActionDelivery } from './webhook-action-port.ts';
import { findWorkflow, type Workflow } from './workflows.repository.ts';
import type { RunStatus } from './workflows.tables.ts';

export interface RunsContext {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  signals: Pick<JobSignals, 'workflowActions'>;
  /** Where `webhook` actions' deliveries are written (the webhook engine's, wired at the root). */
  webhookActions: WebhookActionDeliveries;
}

export interface RunView {
  run: RunRecord;
  actions: ActionRunRecord[];
}

export interface RunDetailView extends RunView {
  attempts: Map<string, AttemptRecordRow[]>;
}

async function workflowOf(ctx: RunsContext, workspaceId: string, workflowId: string): Promise<Workflow> {
  const workflow = await findWorkflow(ctx.db, workspaceId, workflowId);
  if (!workflow) throw new NotFoundError('Workflow');
  return workflow;
}

export async function listRuns(
  ctx: RunsContext,
  workspaceId: string,
  workflowId: string,
  status: RunStatus | undefined,
  offset: number,
  limit: number,
): Promise<{ runs: RunView[]; total: number }> {
  await workflowOf(ctx, workspaceId, workflowId);
  const { runs, total } = await listRunRows(ctx.db, workspaceId, workflowId, status, offset, limit);
  const actions = await actionRunsOf(
    ctx.db,
    runs.map((r) => r.id),
  );
  return {
    runs: runs.map((run) => ({ run, actions: actions.filter((a) => a.runId === run.id) })),
    total,
  };
}

export async function getRun(
  ctx: RunsContext,
  workspaceId: string,
  workflowId: string,
  runId: string,
): Promise<RunDetailView> {
  const run = await findRun(ctx.db, workspaceId, workflowId, runId);
  if (!run) throw new NotFoundError('Run');
  const actions = await actionRunsOf(ctx.db, [run.id]);
  return { run, actions, attempts: await attemptsOf(ctx.db, actions) };
}

/** POST /workflows/{id}/test: a run of every action with a sample event, recorded like any other. */
export async function testWorkflow(
  ctx: RunsContext,
  workspaceId: string,
  workflowId: string,
): Promise<string> {
  const workflow = await workflowOf(ctx, workspaceId, workflowId);
  const geofence = await findGeofence(ctx.db, workspaceId, workflow.geofenceId);
  if (!geofence) throw new NotFoundError('Geofence');
  const now = ctx.clock.now();
  const event = sampleEvent(workflow, geofence, now, { id: uuidv7(), locationId: uuidv7() });
  const runId = await withTransaction(ctx.db, async (trx) => {
    const ids = workflow.actions.flatMap((a) => (a.type === 'webhook' ? [String(a.config.webhook_id)] : []));
    const webhooks = await webhookRequests(trx, ids);
    const rows = emptyRunRows();
    const contextId = buildEventContext(rows, event, SAMPLE_DEVICE, now);
    const id = buildRun(rows, workflow, event, 'test', contextId, webhooks, now);
    await insertRunRows(trx, ctx.capabilities, rows, ctx.webhookActions);
    return id;
  });
  ctx.signals.workflowActions.notify();
  ctx.webhookActions.notify();
  return runId;
}

/**
 * POST /workflows/{id}/runs/{run_id}/retry: the actions that failed for good are queued again with
 * a fresh attempt count, each with the workflow's current config for its position when the type is
 * unchanged (a fixed URL or key applies), else as it ran. A `webhook` action gets a new delivery.
 */
export async function retryRun(
  ctx: RunsContext,
  workspaceId: string,
  workflowId: string,
  runId: string,
): Promise<RunView> {
  const workflow = await workflowOf(ctx, workspaceId, workflowId);
  const run = await findRun(ctx.db, workspaceId, workflowId, runId);
  if (!run) throw new NotFoundError('Run');
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (trx) => {
    // Under the run's lock, like the workers' records: its status is refreshed from every action.
    await lockRuns(trx, ctx.capabilities, [run.id]);
    const failed = (await actionRunsOf(trx, [run.id])).filter((a) => a.status === 'failed');
    if (failed.length === 0) throw new BadRequestError('The run has no failed actions to retry');
    const stored = (await runContexts(trx, [run.id])).get(run.id);
    if (!stored) throw new NotFoundError('Run');
    const context = parseRunContext(stored);
    const current = failed.map((a) => {
      const now_ = workflow.actions[a.position];
      const ran = JSON.parse(a.action) as StoredAction;
      return { job: a, action: now_ && now_.type === ran.type ? now_ : ran };
    });
    const webhookIds = current.flatMap((c) =>
      c.action.type === 'webhook' ? [String(c.action.config.webhook_id)] : [],
    );
    const webhooks = await webhookRequests(trx, webhookIds);
    const deliveries: WebhookActionDelivery[] = [];
    const requeued = current.map(({ job, action }) => {
      if (action.type !== 'webhook') return { id: job.id, action, deliveryId: null, error: null };
      const webhookId = String(action.config.webhook_id);
      const target = webhooks.get(webhookId);
      if (!target) return { id: job.id, action, deliveryId: null, error: 'The webhook was deleted' };
      const deliveryId = uuidv7();
      const key = crypto.randomUUID();
      const payload = JSON.stringify({ ...(JSON.parse(context.payload_json) as object), id: key });
      deliveries.push({
        id: deliveryId,
        workspaceId,
        webhookId,
        eventRowId: null,
        geofenceId: context.geofence.id,
        eventType: context.event,
        eventId: context.event_id,
        idempotencyKey: key,
        payload,
        url: target.url,
        method: target.method,
        now,
      });
      return { id: job.id, action, deliveryId, error: null };
    });
    await ctx.webhookActions.insert(trx, deliveries);
    // The attempt that ended each action was kept on its row (ADR 020): it becomes a row of its own.
    await insertAttemptRows(
      trx,
      ctx.capabilities,
      failed.flatMap((a) => (a.endingAttempt ? [{ actionRunId: a.id, ...a.endingAttempt }] : [])),
    );
    await requeueActions(trx, requeued, now);
    await refreshRunStatus(trx, [run.id], now);
  });
  ctx.signals.workflowActions.notify();
  ctx.webhookActions.notify();
  const after = await findRun(ctx.db, workspaceId, workflowId, runId);
  if (!after) throw new NotFoundError('Run');
  return { run: after, actions: await actionRunsOf(ctx.db, [after.id]) };
}
