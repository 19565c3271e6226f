import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/**
 * Workflows (contract §6, ADR 014): the automations, their runs (one per triggering event or
 * test), each run's actions as jobs of the workflow queue (leases and due times as deliveries,
 * ADR 010) and their attempts. A `webhook` action is a webhook delivery: its job row points at
 * the delivery and follows its outcome.
 */
export const workflows: Migration = {
  name: '0009_workflows',
  async up(db, { types: t }) {
    await db.schema
      .createTable('workflows')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      // No foreign key: a deleted geofence leaves the workflow inert (it never matches again).
      .addColumn('geofence_id', 'text', (c) => c.notNull())
      .addColumn('event_types', t.json, (c) => c.notNull())
      .addColumn('actions', t.json, (c) => c.notNull())
      .addColumn('enabled', t.boolean, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('workflows_workspace_created_idx')
      .on('workflows')
      .columns(['workspace_id', 'created_at'])
      .execute();
    await db.schema
      .createIndex('workflows_trigger_idx')
      .on('workflows')
      .columns(['workspace_id', 'geofence_id'])
      .execute();

    await db.schema
      .createTable('workflow_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('workflow_id', 'text', (c) => c.notNull().references('workflows.id').onDelete('cascade'))
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('event_row_id', 'text')
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('context', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('finished_at', t.timestamp)
      .execute();
    await db.schema
      .createIndex('workflow_runs_workflow_created_idx')
      .on('workflow_runs')
      .columns(['workflow_id', 'created_at'])
      .execute();
    // A re-dispatched outbox row cannot run a workflow twice for one event.
    await db.schema
      .createIndex('workflow_runs_event_workflow_uq')
      .on('workflow_runs')
      .columns(['event_row_id', 'workflow_id'])
      .unique()
      .where(sql.ref('origin'), '=', 'event')
      .execute();

    await db.schema
      .createTable('workflow_action_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('run_id', 'text', (c) => c.notNull().references('workflow_runs.id').onDelete('cascade'))
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('workflow_id', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('delivery_id', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempt_count', 'integer', (c) => c.notNull())
      .addColumn('response_status_code', 'integer')
      .addColumn('error_message', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('finished_at', t.timestamp)
      .addColumn('next_retry_at', t.timestamp)
      .addColumn('due_at', t.timestamp, (c) => c.notNull())
      .addColumn('lease_owner', 'text')
      .execute();
    // The workflow worker's queue: pending jobs it runs itself (webhook actions are deliveries).
    await db.schema
      .createIndex('workflow_action_runs_due_idx')
      .on('workflow_action_runs')
      .columns(['due_at', 'id'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();
    await db.schema
      .createIndex('workflow_action_runs_run_idx')
      .on('workflow_action_runs')
      .columns(['run_id', 'position'])
      .execute();
    await db.schema
      .createIndex('workflow_action_runs_delivery_idx')
      .on('workflow_action_runs')
      .column('delivery_id')
      .execute();

    await db.schema
      .createTable('workflow_action_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('action_run_id', 'text', (c) =>
        c.notNull().references('workflow_action_runs.id').onDelete('cascade'),
      )
      .addColumn('n', 'integer', (c) => c.notNull())
      .addColumn('started_at', t.timestamp, (c) => c.notNull())
      .addColumn('duration_ms', t.double, (c) => c.notNull())
      .addColumn('response_status_code', 'integer')
      .addColumn('error_message', 'text')
      .addColumn('response_excerpt', 'text')
      .execute();
    await db.schema
      .createIndex('workflow_action_attempts_action_idx')
      .on('workflow_action_attempts')
      .columns(['action_run_id', 'n'])
      .execute();
  },
};
