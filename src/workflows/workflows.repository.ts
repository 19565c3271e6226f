/** SQL of workflow records (contract §6): CRUD and the lookups of the checks on save. */
import { sql } from 'kysely';
import { fromJson, json, toBool, toDate } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';
import type { StoredAction } from './action-secrets.ts';
import type { TriggerEventType } from './workflows.schemas.ts';

export interface Workflow {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  geofenceId: string;
  eventTypes: TriggerEventType[];
  actions: StoredAction[];
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
  /** 1 at creation, raised by every update. */
  version: number;
}

export type WorkflowChanges = Partial<
  Pick<Workflow, 'name' | 'description' | 'geofenceId' | 'eventTypes' | 'actions' | 'enabled'>
>;

const COLUMNS = [
  'id',
  'workspace_id',
  'name',
  'description',
  'geofence_id',
  'event_types',
  'actions',
  'enabled',
  'created_at',
  'updated_at',
  'version',
] as const;

interface Row {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  geofence_id: string;
  event_types: unknown;
  actions: unknown;
  enabled: boolean | number;
  created_at: Date | string;
  updated_at: Date | string;
  version: number | string;
}

export function toWorkflow(row: Row): Workflow {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    name: row.name,
    description: row.description,
    geofenceId: row.geofence_id,
    eventTypes: fromJson<TriggerEventType[]>(row.event_types),
    actions: fromJson<StoredAction[]>(row.actions),
    enabled: toBool(row.enabled),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
    version: Number(row.version),
  };
}

export async function insertWorkflow(db: Executor, w: Workflow): Promise<void> {
  await db
    .insertInto('workflows')
    .values({
      id: w.id,
      workspace_id: w.workspaceId,
      name: w.name,
      description: w.description,
      geofence_id: w.geofenceId,
      event_types: json(w.eventTypes),
      actions: json(w.actions),
      enabled: w.enabled,
      created_at: w.createdAt,
      updated_at: w.updatedAt,
      version: w.version,
    })
    .execute();
}

export async function findWorkflow(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<Workflow | undefined> {
  const row = await db
    .selectFrom('workflows')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toWorkflow(row) : undefined;
}

/** Newest first (UUIDv7 ids break ties of one millisecond in creation order). */
export async function listWorkflows(
  db: Executor,
  workspaceId: string,
  filters: { enabled?: boolean | undefined; geofenceId?: string | undefined },
  offset: number,
  limit: number,
): Promise<{ workflows: Workflow[]; total: number }> {
  let rows = db.selectFrom('workflows').where('workspace_id', '=', workspaceId);
  if (filters.enabled !== undefined) rows = rows.where('enabled', '=', filters.enabled);
  if (filters.geofenceId !== undefined) rows = rows.where('geofence_id', '=', filters.geofenceId);
  const [page, count] = await Promise.all([
    rows
      .select(COLUMNS)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute(),
    rows.select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { workflows: page.map(toWorkflow), total: Number(count.n) };
}

/**
 * Applies `changes` to the workflow if it is still at `version`, raising the version; undefined when
 * it is gone or another update came first (the caller tells which).
 */
export async function updateWorkflow(
  db: Executor,
  workspaceId: string,
  id: string,
  version: number,
  changes: WorkflowChanges,
  now: Date,
): Promise<Workflow | undefined> {
  const set: Record<string, unknown> = { updated_at: now, version: sql`version + 1` };
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.geofenceId !== undefined) set.geofence_id = changes.geofenceId;
  if (changes.eventTypes !== undefined) set.event_types = json(changes.eventTypes);
  if (changes.actions !== undefined) set.actions = json(changes.actions);
  if (changes.enabled !== undefined) set.enabled = changes.enabled;
  // The row as this update wrote it, not as a later one may have left it.
  const row = await db
    .updateTable('workflows')
    .set(set)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('version', '=', version)
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toWorkflow(row) : undefined;
}

export async function deleteWorkflow(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('workflows')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function geofenceExists(db: Executor, workspaceId: string, id: string): Promise<boolean> {
  const row = await db
    .selectFrom('geofences')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row !== undefined;
}

/** Of `ids`, those that are webhooks of the workspace. */
export async function existingWebhookIds(
  db: Executor,
  workspaceId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('webhooks')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', [...ids])
    .execute();
  return new Set(rows.map((r) => r.id));
}
