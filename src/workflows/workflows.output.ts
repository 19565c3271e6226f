/** The JSON forms of workflows and runs in answers (contract §6). */
import { publicAction } from './action-secrets.ts';
import type { ActionRunRecord, AttemptRecordRow, RunRecord } from './runs.repository.ts';
import type { Workflow } from './workflows.repository.ts';

export function workflowOut(w: Workflow) {
  return {
    id: w.id,
    name: w.name,
    description: w.description,
    trigger: { geofence_id: w.geofenceId, event_types: w.eventTypes },
    actions: w.actions.map(publicAction),
    enabled: w.enabled,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
    version: w.version,
  };
}

function actionRunOut(a: ActionRunRecord) {
  return {
    position: a.position,
    type: a.type as ReturnType<typeof publicAction>['type'],
    status: a.status,
    attempt_count: a.attemptCount,
    response_status_code: a.responseStatusCode,
    error_message: a.errorMessage,
    next_retry_at: a.status === 'pending' && a.nextRetryAt ? a.nextRetryAt.toISOString() : null,
    finished_at: a.finishedAt ? a.finishedAt.toISOString() : null,
    delivery_id: a.deliveryId,
  };
}

function runFields(run: RunRecord) {
  return {
    id: run.id,
    workflow_id: run.workflowId,
    event_id: run.eventId,
    event_type: run.eventType,
    test: run.origin === 'test',
    status: run.status,
    created_at: run.createdAt.toISOString(),
    finished_at: run.finishedAt ? run.finishedAt.toISOString() : null,
  };
}

export function runOut(view: { run: RunRecord; actions: readonly ActionRunRecord[] }) {
  return { ...runFields(view.run), actions: view.actions.map(actionRunOut) };
}

export function runDetailOut(view: {
  run: RunRecord;
  actions: readonly ActionRunRecord[];
  attempts: ReadonlyMap<string, AttemptRecordRow[]>;
}) {
  return {
    ...runFields(view.run),
    actions: view.actions.map((a) => ({
      ...actionRunOut(a),
      attempts: (view.attempts.get(a.id) ?? []).map((t) => ({
        n: t.n,
        started_at: t.startedAt.toISOString(),
        duration_ms: t.durationMs,
        response_status_code: t.responseStatusCode,
        error_message: t.errorMessage,
        response_excerpt: t.responseExcerpt,
      })),
    })),
  };
}
