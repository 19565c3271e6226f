/**
 * Firing dwell timers whose device did not report past them (contract §4.5, ADR 015). Per
 * workspace, one transaction: lock the devices (the lock ingestion takes, so a device's dwell and
 * its locations are serialised), read the visits again under it — an exit or an ingestion that
 * fired the dwell itself leaves nothing to do — and store each dwell event with its outbox row and
 * usage, marking the visit dwelt. A visit is marked in the transaction that stores its event:
 * exactly one dwell event per visit, whichever node's worker gets there.
 */
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { writesWithCommit } from '../db/writes-with-commit.ts';
import type { LockedDevice } from '../devices/device-tracking.repository.ts';
import { hasEventRecipients } from '../events/event-recipients.repository.ts';
import {
  type GeofenceEvent,
  insertEventsWithOutbox,
  loadEventGeofences,
} from '../events/events.repository.ts';
import { addEventUsage, usagePeriod } from '../usage/usage.repository.ts';
import {
  type DueVisit,
  lastKnownPoint,
  lockDevicesSkipping,
  markDwelled,
  stillDue,
} from './dwell.repository.ts';
import { dwellEventOf } from './ingest-plan.ts';

export interface DwellContext {
  db: Db;
  capabilities: DialectCapabilities;
}

/** What firing one workspace's due visits did. */
export interface FiredVisits {
  /** Dwell events stored (committed). */
  events: GeofenceEvent[];
  /** Whether some stored outbox row waits for the dispatcher. */
  dispatch: boolean;
  /** Visits this round could not take (a device locked by an ingestion): taken on a later round. */
  skipped: DueVisit[];
}

/** Fires these due visits of one workspace at `now`, in one transaction. */
export function fireWorkspaceDwells(
  ctx: DwellContext,
  workspaceId: string,
  visits: readonly DueVisit[],
  now: Date,
): Promise<FiredVisits> {
  return withTransaction(ctx.db, (trx) => fireInWorkspace(ctx, trx, workspaceId, visits, now));
}

async function fireInWorkspace(
  ctx: DwellContext,
  trx: Parameters<Parameters<typeof withTransaction>[1]>[0],
  workspaceId: string,
  visits: readonly DueVisit[],
  now: Date,
): Promise<FiredVisits> {
  const devices = await lockDevicesSkipping(trx, ctx.capabilities, workspaceId, [
    ...new Set(visits.map((v) => v.deviceId)),
  ]);
  const lockable = visits.filter((v) => devices.has(v.deviceId));
  const skipped = visits.filter((v) => !devices.has(v.deviceId));
  const due = await stillDue(trx, lockable, now);
  if (due.length === 0) return { events: [], dispatch: false, skipped };
  const geofences = await loadEventGeofences(trx, workspaceId, [...new Set(due.map((v) => v.geofenceId))]);
  const events: GeofenceEvent[] = [];
  const fired: DueVisit[] = [];
  for (const visit of due) {
    const device = devices.get(visit.deviceId);
    const geofence = geofences.get(visit.geofenceId);
    if (!device || !geofence) continue; // disabled since: no event (contract §4.3), the visit stays as it is
    const point = await lastKnownPoint(trx, ctx.capabilities, workspaceId, visit.deviceId);
    if (!point) continue;
    const locked: LockedDevice = {
      id: visit.deviceId,
      userId: device.userId,
      lastEvaluatedAt: null,
      newestId: null,
      insideGeofenceIds: [],
      activeSessionId: device.activeSessionId,
    };
    events.push(
      dwellEventOf(
        workspaceId,
        locked,
        { geofenceId: visit.geofenceId, at: visit.dueAt, point },
        geofence,
        now,
      ),
    );
    fired.push(visit);
  }
  if (events.length === 0) return { events, dispatch: false, skipped };
  const dispatch = await hasEventRecipients(trx, workspaceId);
  await markDwelled(trx, fired, (v) => v.dueAt);
  const writes = writesWithCommit(trx);
  await insertEventsWithOutbox(writes, ctx.capabilities, events, dispatch ? null : now);
  await addEventUsage(writes, ctx.capabilities, workspaceId, usagePeriod(now), events.length);
  return { events, dispatch, skipped };
}
