/**
 * Geofence use cases (contract §3). Each write runs in one transaction that also bumps the
 * workspace's index version when the set of enabled geofences or a geometry changes; after the
 * commit the change is handed to this node's index registry, so `contains` (and the location
 * pipeline) see it at once, and other nodes within their check interval (ADR 007).
 */

import { admitCreates, type CountLimiter, NO_COUNT_LIMIT } from '../billing/count-limits.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Clock } from '../shared/clock.ts';
import { DuplicateResourceError, NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { GeofenceIndexRegistry, IndexChange } from './geofence-index-registry.ts';
import {
  bumpIndexVersion,
  deleteGeofence as deleteRow,
  type ExportedGeofence,
  exportRowsByIds,
  findGeofence,
  findIdByExternalId,
  type Geofence,
  type GeofenceChanges,
  type GeofenceFilters,
  idsInCreationOrder,
  insertGeofence,
  listGeofences as listRows,
  pageEnabledByIds,
  updateGeofence as updateRow,
} from './geofences.repository.ts';
import { parseGeometryInput } from './geometry-input.ts';
import { type DeviceInside, listDevicesInside } from './presence.repository.ts';
import { type FenceRules, NO_RULES } from './workspace-fences.ts';

export interface GeofencesContext {
  db: Db;
  /** For the many-row statements of a batch. */
  capabilities: DialectCapabilities;
  clock: Clock;
  registry: GeofenceIndexRegistry;
  /** The plan's geofence count limit (contract §7); absent where billing is not wired. */
  countLimit?: CountLimiter | undefined;
}

export interface CreateGeofenceInput {
  name: string;
  description?: string | null | undefined;
  externalId?: string | null | undefined;
  /** Untrusted: validated here. */
  geometry: unknown;
  metadata?: Record<string, unknown> | undefined;
  enabled?: boolean | undefined;
  /** Contract §4.5; absent = null (off). */
  rules?: Partial<FenceRules> | undefined;
}

export interface UpdateGeofenceInput {
  name?: string | undefined;
  description?: string | null | undefined;
  externalId?: string | null | undefined;
  /** Untrusted: validated here; replaces the geometry whole. */
  geometry?: unknown;
  /** Replaces the metadata object whole. */
  metadata?: Record<string, unknown> | undefined;
  enabled?: boolean | undefined;
  /** Only the rules given change; null turns one off. */
  rules?: Partial<FenceRules> | undefined;
}

const NOT_FOUND = 'Geofence';

function duplicateExternalId(externalId: string): DuplicateResourceError {
  return new DuplicateResourceError(`A geofence with external_id "${externalId}" already exists`);
}

/** Runs a write; a unique violation that slipped past the pre-check (a race) is a duplicate too. */
async function guardDuplicate<T>(externalId: string | null | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (typeof externalId === 'string' && isUniqueViolation(error)) throw duplicateExternalId(externalId);
    throw error;
  }
}

export async function createGeofence(
  ctx: GeofencesContext,
  workspaceId: string,
  input: CreateGeofenceInput,
): Promise<Geofence> {
  const valid = parseGeometryInput(input.geometry);
  const now = ctx.clock.now();
  const geofence: Geofence = {
    id: uuidv7(),
    workspaceId,
    name: input.name,
    description: input.description ?? null,
    externalId: input.externalId ?? null,
    geometry: valid.geometry,
    metadata: input.metadata ?? {},
    enabled: input.enabled ?? true,
    bbox: valid.bbox,
    vertexCount: valid.vertexCount,
    version: 1,
    rules: { ...NO_RULES, ...input.rules },
    createdAt: now,
    updatedAt: now,
  };
  const indexVersion = await (ctx.countLimit ?? NO_COUNT_LIMIT)(workspaceId, 'geofences', (limit) =>
    guardDuplicate(geofence.externalId, () =>
      withTransaction(ctx.db, async (trx) => {
        // First in the transaction: the plan's count, exact under concurrency (ADR 011).
        await admitCreates(trx, ctx.capabilities, limit);
        if (
          geofence.externalId !== null &&
          (await findIdByExternalId(trx, workspaceId, geofence.externalId))
        ) {
          throw duplicateExternalId(geofence.externalId);
        }
        await insertGeofence(trx, geofence);
        // A disabled geofence is not in the index: nothing for other nodes to reload.
        return geofence.enabled ? bumpIndexVersion(trx, workspaceId) : undefined;
      }),
    ),
  );
  if (indexVersion !== undefined) {
    ctx.registry.applyCommitted(workspaceId, indexVersion, {
      kind: 'upsert',
      id: geofence.id,
      geometry: geofence.geometry,
      rules: geofence.rules,
    });
  }
  return geofence;
}

export async function getGeofence(ctx: GeofencesContext, workspaceId: string, id: string): Promise<Geofence> {
  const geofence = await findGeofence(ctx.db, workspaceId, id);
  if (!geofence) throw new NotFoundError(NOT_FOUND);
  return geofence;
}

export function listGeofences(
  ctx: GeofencesContext,
  workspaceId: string,
  filters: GeofenceFilters,
  offset: number,
  limit: number,
): Promise<{ geofences: Geofence[]; total: number }> {
  return listRows(ctx.db, workspaceId, filters, offset, limit);
}

/** Rows per read of the export: memory stays bounded however many geofences a workspace has. */
const EXPORT_PAGE = 500;

/**
 * Every geofence of the workspace matching the filters, oldest first, a page at a time (GET
 * /geofences/export): the set is the one found at the start; a geofence deleted meanwhile is left
 * out, one changed meanwhile is exported as it is when its page is read.
 */
export async function* exportGeofences(
  ctx: GeofencesContext,
  workspaceId: string,
  filters: Omit<GeofenceFilters, 'externalId'>,
): AsyncGenerator<ExportedGeofence[]> {
  const ids = await idsInCreationOrder(ctx.db, workspaceId, filters);
  for (let i = 0; i < ids.length; i += EXPORT_PAGE) {
    const page = await exportRowsByIds(ctx.db, workspaceId, ids.slice(i, i + EXPORT_PAGE));
    if (page.length > 0) yield page;
  }
}

export async function updateGeofence(
  ctx: GeofencesContext,
  workspaceId: string,
  id: string,
  input: UpdateGeofenceInput,
): Promise<Geofence> {
  const changes: GeofenceChanges = {
    name: input.name,
    description: input.description,
    externalId: input.externalId,
    geometry: input.geometry === undefined ? undefined : parseGeometryInput(input.geometry),
    metadata: input.metadata,
    enabled: input.enabled,
    rules: input.rules && Object.values(input.rules).some((v) => v !== undefined) ? input.rules : undefined,
  };
  // Nothing to change: answer like GET (no write, updated_at stays).
  if (Object.values(changes).every((v) => v === undefined)) return getGeofence(ctx, workspaceId, id);
  // Only geometry, enabled and the rules change what the index holds; renames leave other nodes'
  // indexes be.
  const touchesIndex =
    changes.geometry !== undefined || changes.enabled !== undefined || changes.rules !== undefined;
  const { geofence, indexVersion } = await guardDuplicate(changes.externalId, () =>
    withTransaction(ctx.db, async (trx) => {
      if (typeof changes.externalId === 'string') {
        const holder = await findIdByExternalId(trx, workspaceId, changes.externalId);
        if (holder !== undefined && holder !== id) throw duplicateExternalId(changes.externalId);
      }
      const updated = await updateRow(trx, workspaceId, id, changes, ctx.clock.now());
      if (!updated) throw new NotFoundError(NOT_FOUND);
      return {
        geofence: updated,
        indexVersion: touchesIndex ? await bumpIndexVersion(trx, workspaceId) : undefined,
      };
    }),
  );
  if (indexVersion !== undefined) {
    // Derived from the row as committed, so concurrent patches cannot leave the index behind it.
    const change: IndexChange = geofence.enabled
      ? { kind: 'upsert', id, geometry: geofence.geometry, rules: geofence.rules }
      : { kind: 'remove', id };
    ctx.registry.applyCommitted(workspaceId, indexVersion, change);
  }
  return geofence;
}

export async function deleteGeofence(ctx: GeofencesContext, workspaceId: string, id: string): Promise<void> {
  const indexVersion = await withTransaction(ctx.db, async (trx) => {
    const deleted = await deleteRow(trx, workspaceId, id);
    if (!deleted) throw new NotFoundError(NOT_FOUND);
    return deleted.wasEnabled ? bumpIndexVersion(trx, workspaceId) : undefined;
  });
  if (indexVersion !== undefined)
    ctx.registry.applyCommitted(workspaceId, indexVersion, { kind: 'remove', id });
}

/** The workspace's enabled geofences containing the point, newest first, paged. */
export async function geofencesContaining(
  ctx: GeofencesContext,
  workspaceId: string,
  lng: number,
  lat: number,
  offset: number,
  limit: number,
): Promise<{ geofences: Geofence[]; total: number }> {
  const ids = await ctx.registry.query(workspaceId, lng, lat);
  if (ids.length === 0) return { geofences: [], total: 0 };
  return pageEnabledByIds(ctx.db, workspaceId, ids, offset, limit);
}

/**
 * The devices inside the workspace's geofence `id` now (contract §4.5), the latest to enter first;
 * NotFound for a geofence that is absent or of another workspace.
 */
export async function devicesInside(
  ctx: GeofencesContext,
  workspaceId: string,
  id: string,
  offset: number,
  limit: number,
): Promise<{ devices: DeviceInside[]; total: number }> {
  await getGeofence(ctx, workspaceId, id);
  return listDevicesInside(ctx.db, ctx.capabilities, workspaceId, id, offset, limit);
}
