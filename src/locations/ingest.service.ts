/**
 * The location → evaluation → event pipeline (contract §4.2–4.4), for one location or a batch.
 *
 * Everything of one call happens in ONE transaction that first locks the rows of the devices
 * involved (in id order: no deadlock between batches sharing devices). Evaluation reads each
 * device's state after its lock, so concurrent requests for one device are evaluated one after the
 * other and produce exactly the events a sequential run would. The locations, their events, the
 * events' outbox rows (ADR 008), the session summaries, the devices' new state and the usage
 * counter commit together or not at all. A group of single POSTs appends its locations to the
 * staged history, in arrival order; the merge moves them to the per-device history later
 * (history-merge.ts). A batch writes them to the per-device history at once.
 *
 * The geofence index is fetched before the transaction (fetching may read the database, which
 * inside the transaction would wait on our own connection on SQLite) and queried inside it, after
 * the lock: this node's geofence writes update that index object in place.
 */
import type { CountLimiter } from '../billing/count-limits.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { type Trx, withTransaction } from '../db/transaction.ts';
import { writesWithCommit } from '../db/writes-with-commit.ts';
import {
  type DeviceTrackingState,
  type LockedDevice,
  lockDevices,
  saveInsideSets,
} from '../devices/device-tracking.repository.ts';
import { saveNewestLocations } from '../devices/last-location.repository.ts';
import { hasEventRecipients } from '../events/event-recipients.repository.ts';
import {
  type GeofenceEvent,
  insertEventsWithOutbox,
  loadEventGeofences,
} from '../events/events.repository.ts';
import type { GeofenceIndexRegistry } from '../geofences/geofence-index-registry.ts';
import type { Clock } from '../shared/clock.ts';
import { NotFoundError } from '../shared/errors.ts';
import { saveSummaries, sessionsByIds } from '../tracking/sessions.repository.ts';
import { addEventUsage, usagePeriod } from '../usage/usage.repository.ts';
import type { ContainmentIndex } from './evaluate.ts';
import { buildRows, type IngestItem, planDevices } from './ingest-plan.ts';
import { fixKey, insertLocations, type StoredLocation, storedFixes } from './locations.repository.ts';
import { readDwellState, writePresence } from './presence.repository.ts';

export type { IngestItem } from './ingest-plan.ts';

export interface IngestContext {
  db: Db;
  clock: Clock;
  registry: GeofenceIndexRegistry;
  capabilities: DialectCapabilities;
  /** Called after a transaction that stored events commits: wakes the outbox dispatcher (ADR 010). */
  afterCommit?: () => void;
  /** Called after a transaction that stored a dwell timer commits: wakes this node's dwell worker. */
  afterTimer?: () => void;
  /** Called after a commit that staged locations, with how many (the history merge's trigger). */
  afterStaged?: (count: number) => void;
  /** The plan's device limit, checked before a batch creates devices for unknown external ids. */
  countLimit?: CountLimiter | undefined;
  /** Called after every commit that stored locations, with what it stored (the live stream, ADR 016). */
  onCommitted?: (committed: CommittedIngestion) => void;
}

/** What one committed ingestion stored, as plain data (the rows it wrote). */
export interface CommittedIngestion {
  workspaceId: string;
  /**
   * The new tracking state of each device with an in-order location in the commit: its newest
   * location and the geofences containing it (devices with out-of-order locations only are absent).
   */
  devices: readonly DeviceTrackingState[];
  /** Its events, in processing order (per device, in timestamp order). */
  events: GeofenceEvent[];
}

export interface IngestResult {
  /** Stored locations by item ref. */
  stored: Map<number, StoredLocation>;
  /** Refs of items whose device does not exist (in this workspace). */
  missingDevice: number[];
  /** Events by item ref, in the order they happened. */
  eventsByRef: Map<number, GeofenceEvent[]>;
  /** All events, in processing order (per device, in timestamp order). */
  events: GeofenceEvent[];
}

export interface IngestOptions {
  /**
   * A request stored whole or not at all (a tracker's batch, ADR 021): a missing device fails the
   * transaction (NotFoundError) instead of being reported beside the stored items.
   */
  allOrNone?: boolean;
  /** Items already stored (same device, same timestamp) or repeated in `items` are left out (see withoutStored). */
  dropStored?: boolean;
  /**
   * Append the locations to the staged history instead of the per-device history (ADR 008, "The
   * staged history"): for groups of single POSTs, whose locations each dirty a leaf of the
   * per-device index of their own. A batch already writes in device order, and its merge would
   * cost more than it saves (`bench:storage`).
   */
  staged?: boolean;
}

export async function ingestLocations(
  ctx: IngestContext,
  workspaceId: string,
  allItems: readonly IngestItem[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  let items = allItems;
  if (items.length === 0) return { stored: new Map(), missingDevice: [], eventsByRef: new Map(), events: [] };
  const index: ContainmentIndex = await ctx.registry.indexFor(workspaceId);

  return withTransaction(ctx.db, async (trx) => {
    const now = ctx.clock.now();
    // Read, under the devices' row locks.
    const deviceIds = [...new Set(items.map((i) => i.deviceId))];
    const devices = await lockDevices(trx, ctx.capabilities, workspaceId, deviceIds);
    if (options.dropStored === true) items = await withoutStored(trx, workspaceId, items, devices);
    // Stored dwell timers matter only where some geofence sets a rule (contract §4.5).
    const dwell =
      index.hasRules === true
        ? await readDwellState(trx, ctx.capabilities, workspaceId, [...devices.keys()])
        : undefined;
    const plan = planDevices(workspaceId, items, devices, index, now, dwell);
    if (options.allOrNone === true && plan.missingDevice.length > 0) throw new NotFoundError('Device');
    const sessionIds = plan.devices.flatMap((d) =>
      d.device.activeSessionId ? [d.device.activeSessionId] : [],
    );
    const sessions = await sessionsByIds(trx, workspaceId, sessionIds);
    // Events copy their geofence's name and metadata; a transition whose geofence is gone from the
    // database (deleted or disabled, this node's index not yet told) is dropped, as it would have
    // been had the index known.
    const geofences =
      plan.transitionIds.size > 0
        ? await loadEventGeofences(trx, workspaceId, [...plan.transitionIds])
        : new Map();
    const rows = buildRows(workspaceId, plan, geofences, sessions, now);

    // Whether anyone subscribes is read here, under the transaction: events of a workspace without
    // an enabled webhook or workflow are dispatched (to nobody) as they are stored, so the dispatcher has no
    // transaction of its own to run for them (ADR 010, "Dispatch").
    const subscribed = rows.events.length > 0 && (await hasEventRecipients(trx, workspaceId));

    // Write. The usage counter goes last: its rows are shared by the workspace's concurrent
    // ingestions, so their locks are held only until the commit that follows. Nothing reads the
    // writes' results: on PostgreSQL they are written with the COMMIT and waited for once, together.
    const writes = writesWithCommit(trx);
    await insertLocations(writes, ctx.capabilities, rows.locations, options.staged === true);
    await saveNewestLocations(writes, ctx.capabilities, rows.states);
    await insertEventsWithOutbox(writes, ctx.capabilities, rows.events, subscribed ? null : now);
    await saveSummaries(writes, ctx.capabilities, workspaceId, rows.sessions);
    await saveInsideSets(writes, ctx.capabilities, workspaceId, rows.insideSets);
    await writePresence(trx, writes, ctx.capabilities, workspaceId, rows.presence);
    await addEventUsage(writes, ctx.capabilities, workspaceId, usagePeriod(now), rows.events.length);
    return {
      result: {
        stored: rows.storedByRef,
        missingDevice: plan.missingDevice,
        eventsByRef: rows.eventsByRef,
        events: rows.events,
      },
      subscribed,
      // A new timer may be due sooner than the worker planned to look (contract §4.5).
      timer: rows.presence.inserts.some((r) => r.dwellDueAt !== null && r.dwelledAt === null),
      states: rows.states,
    };
  }).then(({ result, subscribed, timer, states }) => {
    // Only pending outbox rows need the dispatcher: a commit without any leaves it asleep.
    if (subscribed) ctx.afterCommit?.();
    if (timer) ctx.afterTimer?.();
    if (options.staged === true && result.stored.size > 0) ctx.afterStaged?.(result.stored.size);
    if (result.stored.size > 0) ctx.onCommitted?.({ workspaceId, devices: states, events: result.events });
    return result;
  });
}

/**
 * A batch without the items already stored, for a client that sends a batch again when its answer
 * was lost (ADR 021). Only an item no newer than its device's newest evaluated location can be
 * stored already, so a batch of new fixes, the usual case, costs no read at all; otherwise one
 * read over the per-device history index finds them. Repeats within the batch are left out too.
 */
async function withoutStored(
  trx: Trx,
  workspaceId: string,
  items: readonly IngestItem[],
  devices: ReadonlyMap<string, LockedDevice>,
): Promise<IngestItem[]> {
  const older = items.filter((item) => {
    const newest = devices.get(item.deviceId)?.lastEvaluatedAt;
    return newest != null && item.location.recordedAt.getTime() <= newest.getTime();
  });
  const seen =
    older.length === 0
      ? new Set<string>()
      : await storedFixes(
          trx,
          workspaceId,
          older.map((item) => ({ deviceId: item.deviceId, recordedAt: item.location.recordedAt })),
        );
  return items.filter((item) => {
    const key = fixKey(item.deviceId, item.location.recordedAt);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
