/**
 * The workflow runs one event started, found by the event's row id, never by the seed §6.3
 * `event_id`, which two devices entering one geofence in the same second share. Reads the tables of
 * the workflows module without importing it: that module imports this one, and the folders depend
 * on each other in one direction (docs/architecture.md). The event's deliveries are the webhooks
 * module's list, filtered by the same row id (GET /webhooks/deliveries?event_id=).
 */
import { type SqlBool, sql } from 'kysely';
import { toDate } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';

export interface EventRun {
  id: string;
  workflowId: string;
  /** The workflow's name now. */
  workflowName: string;
  status: 'pending' | 'success' | 'failed';
  createdAt: Date;
  finishedAt: Date | null;
}

/**
 * Runs an event started, as a literal so the partial index `workflow_runs_event_workflow_uq`
 * (origin `event`) answers on both databases: SQLite uses a partial index only when the query
 * repeats its condition as written, which a bound parameter is not.
 */
const startedByEvent = sql<SqlBool>`r.origin = 'event'`;

/** A page of the event's workflow runs, newest first. */
export async function listEventRuns(
  db: Executor,
  workspaceId: string,
  eventRowId: string,
  offset: number,
  limit: number,
): Promise<{ runs: EventRun[]; total: number }> {
  const rows = await db
    .selectFrom('workflow_runs as r')
    .innerJoin('workflows as w', 'w.id', 'r.workflow_id')
    .select(['r.id', 'r.workflow_id', 'w.name as workflow_name', 'r.status', 'r.created_at', 'r.finished_at'])
    .where('r.event_row_id', '=', eventRowId)
    .where(startedByEvent)
    .where('r.workspace_id', '=', workspaceId)
    .orderBy('r.created_at', 'desc')
    .orderBy('r.id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('workflow_runs as r')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('r.event_row_id', '=', eventRowId)
    .where(startedByEvent)
    .where('r.workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return {
    runs: rows.map((r) => ({
      id: r.id,
      workflowId: r.workflow_id,
      workflowName: r.workflow_name,
      status: r.status,
      createdAt: toDate(r.created_at),
      finishedAt: r.finished_at === null ? null : toDate(r.finished_at),
    })),
    total: Number(count.n),
  };
}
