/**
 * Writes the items of POST /geofences/batch (contract §3) that passed their checks
 * (geofence-batch-input.ts): creates, upserts by `external_id`, and the plan's count limit item by
 * item, all in one transaction that bumps the workspace's index version once, so another node
 * reloads its index once for the batch and this node applies every change under that one version
 * (ADR 007). The count limit is checked in that transaction, under the workspace's lock for
 * geofence creates, so racing batches and single creates end exactly at the limit (ADR 011).
 */
import { isDeepStrictEqual } from 'node:util';
import { type CountLimit, NO_COUNT_LIMIT, placesLeft } from '../billing/count-limits.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { withTransaction } from '../db/transaction.ts';
import { DuplicateResourceError } from '../shared/errors.ts';
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
      // Only a batch that creates is subject to the limit (and waits for the other creates).
      const { created, updated, refused } =
        plan.creates.length > 0
          ? await (ctx.countLimit ?? NO_COUNT_LIMIT)(workspaceId, 'geofences', (limit) =>
              commit(ctx, workspaceId, plan, limit),
            )
          : await commit(ctx, workspaceId, plan, undefined);
      const rejected = [...rejectedBefore, ...repeated, ...refused].sort((a, b) => a.index - b.index);
      return { created, updated, rejected };
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

/** Which items create and which update. */
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
  const plan: Plan = { creates: [], upserts: [] };
  for (const { index, input } of items) {
    const match = input.externalId === null ? undefined : existing.get(input.externalId);
    if (match) plan.upserts.push({ index, existing: match, input });
    else plan.creates.push({ index, geofence: newGeofence(workspaceId, input, now) });
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

/**
 * The transaction; then this node's index gets the batch's changes under its one version. The
 * creates beyond the plan's limit, as counted under the lock, are refused item by item with the
 * error a single create would answer once the admitted ones exist.
 */
async function commit(
  ctx: GeofencesContext,
  workspaceId: string,
  plan: Plan,
  limit: CountLimit | undefined,
): Promise<{ created: Geofence[]; updated: Geofence[]; refused: BatchItemRejection[] }> {
  const now = ctx.clock.now();
  const indexChanges: IndexChange[] = [];
  const replacements = plan.upserts.map(({ existing, input }) => replacementOf(existing, input, now));
  const changed = replacements.flatMap((r) => (r === undefined ? [] : [r.replacement]));
  const touching = new Set(replacements.flatMap((r) => (r?.touchesIndex ? [r.replacement.id] : [])));
  const { created, refused, written, indexVersion } = await withTransaction(ctx.db, async (trx) => {
    // First in the transaction: the lock, then the count (only when the batch creates).
    const room = await placesLeft(trx, ctx.capabilities, limit, plan.creates.length);
    const creates = plan.creates.slice(0, room.admitted).map((c) => c.geofence);
    const { refusal } = room;
    const refused = refusal
      ? plan.creates.slice(room.admitted).map(({ index }) => ({ index, error: refusal }))
      : [];
    // A disabled geofence is not in the index.
    for (const g of creates) {
      if (g.enabled) indexChanges.push({ kind: 'upsert', id: g.id, geometry: g.geometry, rules: g.rules });
    }
    await insertGeofences(trx, ctx.capabilities, creates);
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
      created: creates,
      refused,
      written: new Map(rows.map((row) => [row.id, row])),
      indexVersion: indexChanges.length > 0 ? await bumpIndexVersion(trx, workspaceId) : undefined,
    };
  });
  if (indexVersion !== undefined) ctx.registry.applyCommitted(workspaceId, indexVersion, indexChanges);
  // In item order: the row as written, or as found when the item changed nothing.
  const updated = plan.upserts.map(({ existing }) => written.get(existing.id) ?? existing);
  return { created, updated, refused };
}
