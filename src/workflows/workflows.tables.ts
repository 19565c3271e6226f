/** Tables of workflows (contract §6, ADR 014). */
import { bulkTable } from '../db/bulk-table.ts';
import type { BooleanColumn, JsonColumn, NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';

export type RunStatus = 'pending' | 'success' | 'failed';
/** Why a run exists: an event matched its trigger, or POST /workflows/{id}/test. */
export type RunOrigin = 'event' | 'test';

export interface WorkflowsTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  geofence_id: string;
  /** `["enter","exit"]`-like list of event types that trigger the workflow. */
  event_types: JsonColumn;
  /** The actions as stored: secrets sealed, their masks kept for answers (`StoredAction[]`). */
  actions: JsonColumn;
  enabled: BooleanColumn;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
  /** 1 at creation, raised by every update: the `ETag` an `If-Match` names (ADR 014). */
  version: number;
}

export interface WorkflowRunsTable {
  id: string;
  workspace_id: string;
  workflow_id: string;
  origin: RunOrigin;
  /** The `geofence_events` row; null for a test run. */
  event_row_id: string | null;
  /** Seed §6.3 `event_id`. */
  event_id: string;
  event_type: string;
  /**
   * The whole template context of a run started before migration 0017 (JSON text); null since,
   * the run's context being its event's shared one (`context_id`) plus the run's own part
   * (run-context.ts). Either way every attempt renders the same values.
   */
  context: string | null;
  /** The event's shared context (`workflow_event_contexts`); null for runs before migration 0017. */
  context_id: string | null;
  /** The workflow's name as of the run's start (templates render it); null before migration 0017. */
  workflow_name: string | null;
  status: RunStatus;
  created_at: TimestampColumn;
  finished_at: NullableTimestampColumn;
}

/**
 * The part of a run's template context that depends on its event only (run-context.ts
 * `EventContext`, JSON text), written once per event for all the runs it starts (migration 0017).
 */
export interface WorkflowEventContextsTable {
  id: string;
  workspace_id: string;
  context: string;
  created_at: TimestampColumn;
}

/** One action of a run: a job of the workflow queue, or a webhook delivery it follows. */
export interface WorkflowActionRunsTable {
  id: string;
  run_id: string;
  workspace_id: string;
  workflow_id: string;
  /** Index of the action in the workflow's `actions`. */
  position: number;
  type: string;
  /** The stored action (JSON text, secrets sealed) as of the run's creation or its last retry. */
  action: string;
  /** For a `webhook` action: the delivery that carries it. */
  delivery_id: string | null;
  status: RunStatus;
  attempt_count: number;
  response_status_code: number | null;
  error_message: string | null;
  created_at: TimestampColumn;
  finished_at: NullableTimestampColumn;
  next_retry_at: NullableTimestampColumn;
  /** When a worker may take it: the next attempt, or the end of a lease in flight. */
  due_at: TimestampColumn;
  lease_owner: string | null;
  /**
   * The attempt that ended the action (ADR 020), kept here instead of as an attempt row; null while
   * pending, and for actions ended before migration 0015 (their attempts are all rows).
   */
  started_at: NullableTimestampColumn;
  duration_ms: number | null;
  response_excerpt: string | null;
}

export interface WorkflowActionAttemptsTable {
  id: string;
  action_run_id: string;
  n: number;
  started_at: TimestampColumn;
  duration_ms: number;
  response_status_code: number | null;
  error_message: string | null;
  /** At most 1 KiB of the target's answer. */
  response_excerpt: string | null;
}

export interface WorkflowTables {
  workflows: WorkflowsTable;
  workflow_runs: WorkflowRunsTable;
  workflow_event_contexts: WorkflowEventContextsTable;
  workflow_action_runs: WorkflowActionRunsTable;
  workflow_action_attempts: WorkflowActionAttemptsTable;
}

/** The many-row writers of these tables (src/db/bulk-table.ts): named rows, columns declared once. */
export const runWrites = bulkTable<WorkflowRunsTable>()('workflow_runs', {
  id: 'text',
  workspace_id: 'text',
  workflow_id: 'text',
  origin: 'text',
  event_row_id: 'text',
  event_id: 'text',
  event_type: 'text',
  context_id: 'text',
  workflow_name: 'text',
  status: 'text',
  created_at: 'timestamp',
  finished_at: 'timestamp',
});

export const eventContextWrites = bulkTable<WorkflowEventContextsTable>()('workflow_event_contexts', {
  id: 'text',
  workspace_id: 'text',
  context: 'text',
  created_at: 'timestamp',
});

export const actionRunWrites = bulkTable<WorkflowActionRunsTable>()('workflow_action_runs', {
  id: 'text',
  run_id: 'text',
  workspace_id: 'text',
  workflow_id: 'text',
  position: 'integer',
  type: 'text',
  action: 'text',
  delivery_id: 'text',
  status: 'text',
  attempt_count: 'integer',
  error_message: 'text',
  created_at: 'timestamp',
  finished_at: 'timestamp',
  due_at: 'timestamp',
});

export const attemptWrites = bulkTable<WorkflowActionAttemptsTable>()('workflow_action_attempts', {
  id: 'text',
  action_run_id: 'text',
  n: 'integer',
  started_at: 'timestamp',
  duration_ms: 'double',
  response_status_code: 'integer',
  error_message: 'text',
  response_excerpt: 'text',
});
