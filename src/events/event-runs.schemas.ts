/** GET /events/{event_id}/workflow-runs: the runs one event started, leading to their records. */
import { Type } from 'typebox';
import { component } from '../http/components.ts';
import { Id, Nullable, StringEnum, Timestamp } from '../http/schemas.ts';
import type { EventRun } from './event-runs.repository.ts';

export const EventRunSchema = component(
  'EventWorkflowRun',
  Type.Object(
    {
      id: Id,
      workflow_id: Id,
      workflow_name: Type.String({ description: "The workflow's name now" }),
      status: StringEnum(['pending', 'success', 'failed'] as const),
      created_at: Timestamp,
      finished_at: Nullable(Timestamp),
    },
    { description: 'A workflow run the event started; the full record is GET /workflows/{id}/runs/{run_id}' },
  ),
);

export function eventRunOut(r: EventRun) {
  return {
    id: r.id,
    workflow_id: r.workflowId,
    workflow_name: r.workflowName,
    status: r.status,
    created_at: r.createdAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}
