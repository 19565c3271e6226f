/**
 * Workflow use cases (contract §6): CRUD with the checks a JSON schema cannot make (trigger
 * geofence of the workspace, webhooks of `webhook` actions, targets, templates) and the sealing
 * of secrets. Runs: runs.service.ts.
 */
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/encryption.ts';
import { ConflictError, NotFoundError, PreconditionFailedError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { satisfies, type VersionPrecondition } from '../shared/version-precondition.ts';
import type { WorkflowActionInput } from './action-configs.schemas.ts';
import { deleteUnusedEventContexts, eventContextIdsOfWorkflow } from './runs.repository.ts';
import { prepareActions, unknownWebhookIssues } from './workflow-rules.ts';
import {
  deleteWorkflow as deleteRow,
  existingWebhookIds,
  findWorkflow,
  geofenceExists,
  insertWorkflow,
  listWorkflows as listRows,
  updateWorkflow as updateRow,
  type Workflow,
  type WorkflowChanges,
} from './workflows.repository.ts';
import type { TriggerEventType } from './workflows.schemas.ts';

export interface WorkflowsContext {
  db: Db;
  clock: Clock;
  secretBox: SecretBox;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS (contract §0) applies to every outbound target of actions. */
  allowPrivateTargets: boolean;
}

export interface WorkflowInput {
  name: string;
  description: string | null;
  geofenceId: string;
  eventTypes: TriggerEventType[];
  actions: WorkflowActionInput[];
  enabled: boolean;
}

export type WorkflowUpdate = Partial<WorkflowInput>;

const NOT_FOUND = 'Workflow';

async function checkReferences(
  ctx: WorkflowsContext,
  workspaceId: string,
  geofenceId: string | undefined,
  actions: readonly WorkflowActionInput[] | undefined,
): Promise<void> {
  if (geofenceId !== undefined && !(await geofenceExists(ctx.db, workspaceId, geofenceId))) {
    throw new NotFoundError('Geofence');
  }
  if (!actions) return;
  const ids = actions.flatMap((a) => (a.type === 'webhook' ? [a.config.webhook_id] : []));
  if (ids.length > 0) unknownWebhookIssues(actions, await existingWebhookIds(ctx.db, workspaceId, ids));
}

export async function createWorkflow(
  ctx: WorkflowsContext,
  workspaceId: string,
  input: WorkflowInput,
): Promise<Workflow> {
  await checkReferences(ctx, workspaceId, input.geofenceId, input.actions);
  const actions = prepareActions(input.actions, [], ctx.secretBox, ctx.allowPrivateTargets);
  const now = ctx.clock.now();
  const workflow: Workflow = {
    id: uuidv7(),
    workspaceId,
    name: input.name,
    description: input.description,
    geofenceId: input.geofenceId,
    eventTypes: input.eventTypes,
    actions,
    enabled: input.enabled,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  await insertWorkflow(ctx.db, workflow);
  return workflow;
}

export async function getWorkflow(ctx: WorkflowsContext, workspaceId: string, id: string): Promise<Workflow> {
  const workflow = await findWorkflow(ctx.db, workspaceId, id);
  if (!workflow) throw new NotFoundError(NOT_FOUND);
  return workflow;
}

export function listWorkflows(
  ctx: WorkflowsContext,
  workspaceId: string,
  filters: { enabled?: boolean | undefined; geofenceId?: string | undefined },
  offset: number,
  limit: number,
): Promise<{ workflows: Workflow[]; total: number }> {
  return listRows(ctx.db, workspaceId, filters, offset, limit);
}

/** Updates that lost to concurrent ones, read again before giving up with 409. */
const UPDATE_ATTEMPTS = 5;

/**
 * Applies `update` to the version it was based on. Secrets left out are kept from that version,
 * position by position, so the write is conditional on it: should another update land between the
 * read and the write, the update is based on the new version instead (read again, merged again) —
 * or, under a `precondition` (`If-Match`), refused with 412 when the version read is not the one the
 * client named (ADR 014, "Concurrent edits").
 */
export async function updateWorkflow(
  ctx: WorkflowsContext,
  workspaceId: string,
  id: string,
  update: WorkflowUpdate,
  precondition?: VersionPrecondition,
): Promise<Workflow> {
  for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
    const current = await getWorkflow(ctx, workspaceId, id);
    if (precondition && !satisfies(precondition, current.version)) {
      throw new PreconditionFailedError(
        `Workflow is at version ${current.version} (ETag "${current.version}"), not the one If-Match names: read it again and reapply the change`,
      );
    }
    // After the workflow is found and the precondition holds, as RFC 9110 §13.2.2 orders them.
    if (attempt === 0) await checkReferences(ctx, workspaceId, update.geofenceId, update.actions);
    const changes: WorkflowChanges = {
      name: update.name,
      description: update.description,
      geofenceId: update.geofenceId,
      eventTypes: update.eventTypes,
      enabled: update.enabled,
    };
    if (update.actions) {
      changes.actions = prepareActions(
        update.actions,
        current.actions,
        ctx.secretBox,
        ctx.allowPrivateTargets,
      );
    }
    const updated = await updateRow(ctx.db, workspaceId, id, current.version, changes, ctx.clock.now());
    if (updated) return updated;
    // Deleted or changed since the read: the next read answers 404, 412 or a newer version.
  }
  throw new ConflictError(
    'CONFLICT',
    'Workflow is being changed by other requests at the same time: try again',
  );
}

/**
 * Deleting a workflow deletes its runs (a cascade), and with them the event contexts that only
 * they pointed at; contexts other workflows' runs share stay.
 */
export async function deleteWorkflow(ctx: WorkflowsContext, workspaceId: string, id: string): Promise<void> {
  const deleted = await withTransaction(ctx.db, async (trx) => {
    const contextIds = await eventContextIdsOfWorkflow(trx, workspaceId, id);
    if (!(await deleteRow(trx, workspaceId, id))) return false;
    await deleteUnusedEventContexts(trx, contextIds);
    return true;
  });
  if (!deleted) throw new NotFoundError(NOT_FOUND);
}
