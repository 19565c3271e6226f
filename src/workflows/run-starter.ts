/**
 * Starting workflow runs (contract §4.3, §6; ADR 014). Runs start where deliveries do: in the
 * outbox dispatcher's transaction, from outbox rows committed with their events, so an event is
 * never without its runs (a crash before the dispatch leaves the outbox row, which is dispatched
 * after the restart). Each matching workflow gets a run and one job per action; a `webhook`
 * action is a webhook delivery (origin `workflow`) that its job follows. An event that starts runs
 * gets one row of shared template context, which its runs point at (run-context.ts).
 */
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import { geofenceEventPayload } from '../events/event-payload.ts';
import { eventNameOf } from '../events/event-types.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { StoredAction } from './action-secrets.ts';
import { eventContextOf } from './run-context.ts';
import {
  type ActionRunRow,
  devicesByIds,
  type EventContextRow,
  existingEventRuns,
  insertRuns,
  type RunRow,
  type TemplateDevice,
  webhookRequests,
} from './runs.repository.ts';
import type { WebhookActionDeliveries, WebhookActionDelivery } from './webhook-action-port.ts';
import type { Workflow } from './workflows.repository.ts';
import type { RunOrigin } from './workflows.tables.ts';

export interface RunRows {
  contexts: EventContextRow[];
  runs: RunRow[];
  actions: ActionRunRow[];
  deliveries: WebhookActionDelivery[];
}

export const emptyRunRows = (): RunRows => ({ contexts: [], runs: [], actions: [], deliveries: [] });

/** The shared template context of `event` (appended to `out`), for its runs; returns its id. */
export function buildEventContext(
  out: RunRows,
  event: GeofenceEvent,
  device: TemplateDevice | undefined,
  now: Date,
): string {
  const id = uuidv7();
  out.contexts.push({
    id,
    workspace_id: event.workspaceId,
    context: JSON.stringify(eventContextOf(event, device)),
    created_at: now,
  });
  return id;
}

/**
 * The rows of one run of `workflow` for `event` (appended to `out`), pointing at the event's
 * context `contextId` (`buildEventContext`); returns the run id.
 */
export function buildRun(
  out: RunRows,
  workflow: Workflow,
  event: GeofenceEvent,
  origin: RunOrigin,
  contextId: string,
  webhooks: ReadonlyMap<string, { url: string; method: string }>,
  now: Date,
): string {
  const runId = uuidv7();
  let failedAtOnce = 0;
  workflow.actions.forEach((action, position) => {
    const actionId = uuidv7();
    let deliveryId: string | null = null;
    let error: string | null = null;
    if (action.type === 'webhook') {
      const webhookId = String(action.config.webhook_id);
      const target = webhooks.get(webhookId);
      if (target) {
        deliveryId = uuidv7();
        out.deliveries.push(webhookDelivery(deliveryId, workflow, event, webhookId, target, now));
      } else {
        error = 'The webhook was deleted';
        failedAtOnce += 1;
      }
    }
    out.actions.push(actionRow(actionId, runId, workflow, position, action, deliveryId, error, now));
  });
  const allFailed = failedAtOnce === workflow.actions.length;
  out.runs.push({
    id: runId,
    workspace_id: workflow.workspaceId,
    workflow_id: workflow.id,
    origin,
    event_row_id: origin === 'event' ? event.id : null,
    event_id: event.eventId,
    event_type: eventNameOf(event.eventType),
    context_id: contextId,
    // The rest of the run's own context: its id, the workflow's id and `test` (the origin).
    workflow_name: workflow.name,
    status: allFailed ? 'failed' : 'pending',
    created_at: now,
    finished_at: allFailed ? now : null,
  });
  return runId;
}

function actionRow(
  id: string,
  runId: string,
  workflow: Workflow,
  position: number,
  action: StoredAction,
  deliveryId: string | null,
  error: string | null,
  now: Date,
): ActionRunRow {
  return {
    id,
    run_id: runId,
    workspace_id: workflow.workspaceId,
    workflow_id: workflow.id,
    position,
    type: action.type,
    action: JSON.stringify(action),
    delivery_id: deliveryId,
    status: error ? 'failed' : 'pending',
    attempt_count: 0,
    error_message: error,
    created_at: now,
    finished_at: error ? now : null,
    due_at: now,
  };
}

function webhookDelivery(
  id: string,
  workflow: Workflow,
  event: GeofenceEvent,
  webhookId: string,
  target: { url: string; method: string },
  now: Date,
): WebhookActionDelivery {
  const key = crypto.randomUUID();
  return {
    id,
    workspaceId: workflow.workspaceId,
    webhookId,
    eventRowId: event.id,
    geofenceId: event.geofenceId,
    eventType: eventNameOf(event.eventType),
    eventId: event.eventId,
    idempotencyKey: key,
    payload: geofenceEventPayload(event, key),
    url: target.url,
    method: target.method,
    now,
  };
}

/** Writes the rows of built runs: deliveries first (the jobs of webhook actions point at them). */
export async function insertRunRows(
  trx: Executor,
  capabilities: DialectCapabilities,
  rows: RunRows,
  deliveries: WebhookActionDeliveries,
): Promise<void> {
  await deliveries.insert(trx, rows.deliveries);
  await insertRuns(trx, capabilities, rows.contexts, rows.runs, rows.actions);
}

/**
 * Starts the runs of a dispatched batch: one per (event, enabled workflow whose trigger matches),
 * skipping pairs that have one already. Returns how many runs and webhook deliveries it created.
 */
export async function startRuns(
  trx: Executor,
  capabilities: DialectCapabilities,
  events: readonly GeofenceEvent[],
  workflows: ReadonlyMap<string, Workflow[]>,
  now: Date,
  deliveries: WebhookActionDeliveries,
): Promise<{ runs: number; deliveries: number }> {
  const matches: Array<{ event: GeofenceEvent; workflow: Workflow }> = [];
  for (const event of events) {
    for (const workflow of workflows.get(event.workspaceId) ?? []) {
      if (workflow.geofenceId !== event.geofenceId) continue;
      if (!workflow.eventTypes.includes(event.eventType)) continue;
      matches.push({ event, workflow });
    }
  }
  if (matches.length === 0) return { runs: 0, deliveries: 0 };
  const started = await existingEventRuns(trx, [...new Set(matches.map((m) => m.event.id))]);
  const fresh = matches.filter((m) => !started.has(`${m.event.id}|${m.workflow.id}`));
  const devices = await devicesByIds(trx, [...new Set(fresh.map((m) => m.event.deviceId))]);
  const webhookIds = fresh.flatMap((m) =>
    m.workflow.actions.flatMap((a) => (a.type === 'webhook' ? [String(a.config.webhook_id)] : [])),
  );
  const webhooks = await webhookRequests(trx, [...new Set(webhookIds)]);
  const rows = emptyRunRows();
  // One context per event, however many of its workflows start.
  const contextIds = new Map<string, string>();
  for (const { event, workflow } of fresh) {
    let contextId = contextIds.get(event.id);
    if (contextId === undefined) {
      contextId = buildEventContext(rows, event, devices.get(event.deviceId), now);
      contextIds.set(event.id, contextId);
    }
    buildRun(rows, workflow, event, 'event', contextId, webhooks, now);
  }
  await insertRunRows(trx, capabilities, rows, deliveries);
  return { runs: rows.runs.length, deliveries: rows.deliveries.length };
}
