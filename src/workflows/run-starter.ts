/**
 * Starting workflow runs (contract §4.3, §6; ADR 014). Runs start where deliveries do: in the
 * outbox dispatcher's transaction, from outbox rows committed with their events, so an event is
 * never without its runs (a crash before the dispatch leaves the outbox row, which is dispatched
 * after the restart). Each matching workflow gets a run and one job per action; a `webhook`
 * action is a webhook delivery (origin `workflow`) that its job follows.
 */
import type { DialectCapabilities } from '../db/database.ts';
import { insertRows } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import { eventNameOf } from '../events/event-types.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';
import { uuidv7 } from '../shared/ids.ts';
import { DELIVERY_COLUMNS, deliveryRow } from '../webhooks/deliveries.repository.ts';
import { geofenceEventPayload } from '../webhooks/delivery-payload.ts';
import type { StoredAction } from './action-secrets.ts';
import { eventContext } from './run-context.ts';
import {
  devicesByIds,
  existingEventRuns,
  insertRuns,
  type TemplateDevice,
  webhookRequests,
} from './runs.repository.ts';
import type { Workflow } from './workflows.repository.ts';
import type { RunOrigin } from './workflows.tables.ts';

export interface RunRows {
  runs: unknown[][];
  actions: unknown[][];
  deliveries: unknown[][];
}

export const emptyRunRows = (): RunRows => ({ runs: [], actions: [], deliveries: [] });

/** The rows of one run of `workflow` for `event` (appended to `out`); returns the run id. */
export function buildRun(
  out: RunRows,
  workflow: Workflow,
  event: GeofenceEvent,
  origin: RunOrigin,
  device: TemplateDevice | undefined,
  webhooks: ReadonlyMap<string, { url: string; method: string }>,
  now: Date,
): string {
  const runId = uuidv7();
  const context = eventContext(
    event,
    device,
    { id: workflow.id, name: workflow.name },
    runId,
    origin === 'test',
  );
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
  out.runs.push([
    runId,
    workflow.workspaceId,
    workflow.id,
    origin,
    origin === 'event' ? event.id : null,
    event.eventId,
    eventNameOf(event.eventType),
    JSON.stringify(context),
    allFailed ? 'failed' : 'pending',
    now,
    allFailed ? now : null,
  ]);
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
): unknown[] {
  return [
    id,
    runId,
    workflow.workspaceId,
    workflow.id,
    position,
    action.type,
    JSON.stringify(action),
    deliveryId,
    error ? 'failed' : 'pending',
    0,
    error,
    now,
    error ? now : null,
    now,
  ];
}

function webhookDelivery(
  id: string,
  workflow: Workflow,
  event: GeofenceEvent,
  webhookId: string,
  target: { url: string; method: string },
  now: Date,
): unknown[] {
  const key = crypto.randomUUID();
  return deliveryRow({
    id,
    workspaceId: workflow.workspaceId,
    webhookId,
    origin: 'workflow',
    eventRowId: event.id,
    geofenceId: event.geofenceId,
    eventType: eventNameOf(event.eventType),
    eventId: event.eventId,
    idempotencyKey: key,
    payload: geofenceEventPayload(event, key),
    url: target.url,
    method: target.method,
    now,
  });
}

/** Writes the rows of built runs: deliveries first (the jobs of webhook actions point at them). */
export async function insertRunRows(
  trx: Executor,
  capabilities: DialectCapabilities,
  rows: RunRows,
): Promise<void> {
  await insertRows(trx, capabilities, 'webhook_deliveries', DELIVERY_COLUMNS, rows.deliveries);
  await insertRuns(trx, capabilities, rows.runs, rows.actions);
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
  for (const { event, workflow } of fresh) {
    buildRun(rows, workflow, event, 'event', devices.get(event.deviceId), webhooks, now);
  }
  await insertRunRows(trx, capabilities, rows);
  return { runs: rows.runs.length, deliveries: rows.deliveries.length };
}
