/**
 * Writes the items of POST /geofences/batch (contract §3) that passed their checks
 * (geofence-batch-input.ts): creates, upserts by `external_id`, and the plan's count limit item by
 * item, all in one transaction that bumps the workspace's index version once, so another node
 * reloads its index once for the batch and this node applies every change under that one version
 * (ADR 007).
 */
import { isDeepStrictEqual } from 'node:util';
import { isUniqueViolation } from '../db/errors.ts';
import { withTransaction } from '../db/transaction.ts';
import { DuplicateResourceError, QuotaExceededError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { BatchItemInput, BatchItemRejection } from './geofence-batch-input.ts';
import type { IndexChange } from './geofence-index-registry.ts';
import {
  bumpIndexVersion,
  findByExternalIds,
  type Geofence,
  insertGeofences,
  replaceGeofences,
} from './geofences.repository.ts';
import type { GeofencesContext } from './geofences.service.ts';

export interface BatchItem {
  index: number;
  input: BatchItemInput;
}

export interface BatchOutcome {
  /** New geofences, in item order. */
  created: Geofence[];
  /** Existing geofences matched by `external_id`, as they are now, in item order. */
  updated: Geofence[];
  /** Items not stored, in item order (with those rejected before they got here). */
  rejected: BatchItemRejection[];
}

/** A geofence matched by `external_id` vanished or appeared between the lookup and the write. */
class LookupRaced extends Error {}

/** Attempts of the write when a concurrent request races it on an `external_id`. */
const ATTEMPTS = 3;

interface Plan {
  creates: Array<{ index: number; geofence: Geofence }>;
  upserts: Array<{ index: number; existing: Geofence; input: BatchItemInput }>;
  rejected: BatchItemRejection[];
}

/**
 * Writes `items` (already checked one by one) for the workspace; `rejectedBefore` are the items the
 * checks refused, merged into the outcome.
 */
export async function writeBatch(
  ctx: GeofencesContext,
  workspaceId: string,
  items: readonly BatchItem[],
  rejectedBefore: readonly BatchItemRejection[],
): Promise<BatchOutcome> {
  const { unique, repeated } = firstOfEachExternalId(items);
  for (let attempt = 1; ; attempt++) {
    try {
      const plan = await planWrites(ctx, workspaceId, unique);
      const written = await commit(ctx, workspaceId, plan);
      const rejected = [...rejectedBefore, ...repeated, ...plan.rejected].sort((a, b) => a.index - b.index);
      return { created: plan.creates.map((c) => c.geofence), updated: written, rejected };
    } catch (error) {
      // Another request created or deleted a geofence of one of our external ids meanwhile: plan
      // again from what is stored now (its create becomes our update, or the other way round).
      const raced = error instanceof LookupRaced || isUniqueViolation(error);
      if (!raced || attempt >= ATTEMPTS) throw error;
    }
  }
}

/** A later item repeating an earlier item's `external_id` is refused, as a second create would be. */
function firstOfEachExternalId(items: readonly BatchItem[]): {
  unique: BatchItem[];
  repeated: BatchItemRejection[];
} {
  const firstIndex = new Map<string, number>();
  const unique: BatchItem[] = [];
  const repeated: BatchItemRejection[] = [];
  for (const item of items) {
    const externalId = item.input.externalId;
    const earlier = externalId === null ? undefined : firstIndex.get(externalId);
    if (earlier !== undefined) {
      repeated.push({
        index: item.index,
        error: new DuplicateResourceError(
          `A geofence with external_id "${externalId}" is already item ${earlier} of this batch`,
        ),
      });
      continue;
    }
    if (externalId !== null) firstIndex.set(externalId, item.index);
    unique.push(item);
  }
  return { unique, repeated };
}

/** Which items create and which update, and the creates the plan's count limit refuses. */
async function planWrites(
  ctx: GeofencesContext,
  workspaceId: string,
  items: readonly BatchItem[],
): Promise<Plan> {
  const externalIds = items.flatMap((item) =>
    item.input.externalId === null ? [] : [item.input.externalId],
  );
  const existing = new Map(
    (await findByExternalIds(ctx.db, workspaceId, externalIds)).map((g) => [g.externalId as string, g]),
  );
  const now = ctx.clock.now();
  const plan: Plan = { creates: [], upserts: [], rejected: [] };
  for (const { index, input } of items) {
    const match = input.externalId === null ? undefined : existing.get(input.externalId);
    if (match) plan.upserts.push({ index, existing: match, input });
    else plan.creates.push({ index, geofence: newGeofence(workspaceId, input, now) });
  }
  const allowed = await creatableCount(ctx, workspaceId, plan.creates.length);
  if (allowed.count < plan.creates.length) {
    for (const { index } of plan.creates.slice(allowed.count)) {
      plan.rejected.push({ index, error: allowed.refusal as QuotaExceededError });
    }
    plan.creates = plan.creates.slice(0, allowed.count);
  }
  return plan;
}

function newGeofence(workspaceId: string, input: BatchItemInput, now: Date): Geofence {
  return {
    id: uuidv7(),
    workspaceId,
    name: input.name,
    description: input.description,
    externalId: input.externalId,
    geometry: input.geometry.geometry,
    metadata: input.metadata,
    enabled: input.enabled,
    bbox: input.geometry.bbox,
    vertexCount: input.geometry.vertexCount,
    version: 1,
    rules: input.rules,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * How many of `wanted` creates the plan's count limit admits, and for the others the error a single
 * create would answer once the admitted ones exist. One check for the whole batch: the limiter is
 * asked for all of them, and its refusal tells the limit and the count.
 */
async function creatableCount(
  ctx: GeofencesContext,
  workspaceId: string,
  wanted: number,
): Promise<{ count: number; refusal?: QuotaExceededError }> {
  if (wanted === 0 || ctx.countLimit === undefined) return { count: wanted };
  try {
    // Before the transaction, as a single create checks: on SQLite the pool is the connection the
    // transaction would hold.
    await ctx.countLimit(ctx.db, workspaceId, 'geofences', wanted);
    return { count: wanted };
  } catch (error) {
    if (!(error instanceof QuotaExceededError)) throw error;
    const { limit, count } = (error.details ?? {}) as { limit?: unknown; count?: unknown };
    if (typeof limit !== 'number' || typeof count !== 'number') return { count: 0, refusal: error };
    const admitted = Math.max(0, Math.min(wanted, limit - count));
    // A create past the limit sees the count the admitted creates leave; the message names the plan
    // and the limit only, so it is the single create's message too.
    return {
      count: admitted,
      refusal: new QuotaExceededError(error.message, { ...error.details, count: count + admitted }),
    };
  }
}

/**
 * Whether two JSON values are equal as stored: compared after a JSON round trip, so that a `-0` sent
 * (stored as `0`) or the key order of PostgreSQL's jsonb does not count as a change.
 */
function sameJson(stored: unknown, sent: unknown): boolean {
  return isDeepStrictEqual(stored, JSON.parse(JSON.stringify(sent)));
}

/**
 * The geofence an upsert leaves (`existing` with every field of the item), and whether it touches
 * the index; undefined when the item equals the stored geofence (nothing to write).
 */
function replacementOf(
  existing: Geofence,
  input: BatchItemInput,
  now: Date,
): { replacement: Geofence; touchesIndex: boolean } | undefined {
  const geometryChanged = !sameJson(existing.geometry, input.geometry.geometry);
  const rulesChanged = !isDeepStrictEqual(existing.rules, input.rules);
  const enabledChanged = existing.enabled !== input.enabled;
  const changed =
    geometryChanged ||
    rulesChanged ||
    enabledChanged ||
    existing.name !== input.name ||
    existing.description !== input.description ||
    !sameJson(existing.metadata, input.metadata);
  if (!changed) return undefined;
  return {
    replacement: {
      ...existing,
      name: input.name,
      description: input.description,
      geometry: input.geometry.geometry,
      bbox: input.geometry.bbox,
      vertexCount: input.geometry.vertexCount,
      metadata: input.metadata,
      enabled: input.enabled,
      rules: input.rules,
      updatedAt: now,
    },
    // What the index holds changes only with the geometry, the enabled flag or the rules, and only
    // for a geofence enabled before or after.
    touchesIndex: (geometryChanged || enabledChanged || rulesChanged) && (existing.enabled || input.enabled),
  };
}

/** The transaction; then this node's index gets the batch's changes under its one version. */
async function commit(ctx: GeofencesContext, workspaceId: string, plan: Plan): Promise<Geofence[]> {
  const now = ctx.clock.now();
  const indexChanges: IndexChange[] = [];
  for (const { geofence: g } of plan.creates) {
    // A disabled geofence is not in the index.
    if (g.enabled) indexChanges.push({ kind: 'upsert', id: g.id, geometry: g.geometry, rules: g.rules });
  }
  const replacements = plan.upserts.map(({ existing, input }) => replacementOf(existing, input, now));
  const changed = replacements.flatMap((r) => (r === undefined ? [] : [r.replacement]));
  const touching = new Set(replacements.flatMap((r) => (r?.touchesIndex ? [r.replacement.id] : [])));
  const { written, indexVersion } = await withTransaction(ctx.db, async (trx) => {
    await insertGeofences(
      trx,
      ctx.capabilities,
      plan.creates.map((c) => c.geofence),
    );
    const rows = await replaceGeofences(trx, ctx.capabilities, workspaceId, changed);
    if (rows.length !== changed.length) throw new LookupRaced();
    for (const row of rows) {
      if (!touching.has(row.id)) continue;
      // From the row as committed, as a single update does.
      indexChanges.push(
        row.enabled
          ? { kind: 'upsert', id: row.id, geometry: row.geometry, rules: row.rules }
          : { kind: 'remove', id: row.id },
      );
    }
    return {
      written: new Map(rows.map((row) => [row.id, row])),
      indexVersion: indexChanges.length > 0 ? await bumpIndexVersion(trx, workspaceId) : undefined,
    };
  });
  if (indexVersion !== undefined) ctx.registry.applyCommitted(workspaceId, indexVersion, indexChanges);
  // In item order: the row as written, or as found when the item changed nothing.
  return plan.upserts.map(({ existing }) => written.get(existing.id) ?? existing);
}
