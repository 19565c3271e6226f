/**
 * The dwell worker's SQL (contract §4.5, ADR 015): which visits' dwell is due, the due ones of a
 * set of devices read again under the devices' locks, their last locations, and the mark that a
 * visit dwelt. Every write happens in the worker's transaction, beside the event it produced.
 */
import { type SqlBool, sql } from 'kysely';
import type { DialectCapabilities } from '../db/database.ts';
import { chunks } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import { newestLocations } from '../devices/last-location.repository.ts';
import type { KnownPoint } from './presence-plan.ts';

export interface DueVisit {
  deviceId: string;
  geofenceId: string;
  workspaceId: string;
  dueAt: Date;
}

const pendingDwell = sql<SqlBool>`p.dwelled_at is null`;

/**
 * Up to `limit` visits whose dwell is due at `now`, oldest first (read without locks). Only visits
 * of enabled geofences: a disabled one produces no event (contract §4.3), and its pending visits,
 * left until the device reports again, must neither fill every round nor wake the worker at once.
 */
export async function dueVisits(db: Executor, now: Date, limit: number): Promise<DueVisit[]> {
  const rows = await db
    .selectFrom('geofence_presence as p')
    .innerJoin('geofences as g', 'g.id', 'p.geofence_id')
    .select(['p.device_id', 'p.geofence_id', 'p.workspace_id', 'p.dwell_due_at'])
    .where(pendingDwell)
    .where('g.enabled', '=', true)
    .where('p.dwell_due_at', '<=', now)
    .orderBy('p.dwell_due_at')
    .orderBy('p.device_id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    deviceId: r.device_id,
    geofenceId: r.geofence_id,
    workspaceId: r.workspace_id,
    dueAt: new Date(r.dwell_due_at as Date | string),
  }));
}

/** The earliest pending dwell of an enabled geofence, to sleep until it (null when none is pending). */
export async function nextDwellDue(db: Executor): Promise<Date | null> {
  const row = await db
    .selectFrom('geofence_presence as p')
    .innerJoin('geofences as g', 'g.id', 'p.geofence_id')
    .select((eb) => eb.fn.min('p.dwell_due_at').as('due'))
    .where(pendingDwell)
    .where('g.enabled', '=', true)
    .executeTakeFirst();
  return row?.due ? new Date(row.due as Date | string) : null;
}

/**
 * Locks the devices' rows in id order, skipping rows another transaction holds on PostgreSQL (an
 * ingestion of that device: its visits are taken on a later round, or fired by that ingestion).
 * Returns the ids locked.
 */
export async function lockDevicesSkipping(
  trx: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  ids: readonly string[],
): Promise<Map<string, { userId: string | null; activeSessionId: string | null }>> {
  let query = trx
    .selectFrom('devices')
    .select(['id', 'user_id', 'active_session_id'])
    .where('id', 'in', [...ids].sort())
    .where('workspace_id', '=', workspaceId)
    .orderBy('id');
  if (capabilities.rowLocks)
    query = capabilities.skipLocked ? query.forUpdate().skipLocked() : query.forUpdate();
  const rows = await query.execute();
  return new Map(rows.map((r) => [r.id, { userId: r.user_id, activeSessionId: r.active_session_id }]));
}

/** Of these visits, the ones still pending and due at `now`, read under the devices' locks. */
export async function stillDue(trx: Executor, visits: readonly DueVisit[], now: Date): Promise<DueVisit[]> {
  const out: DueVisit[] = [];
  for (const part of chunks(visits, 250)) {
    const rows = await trx
      .selectFrom('geofence_presence as p')
      .select(['device_id', 'geofence_id', 'workspace_id', 'dwell_due_at'])
      .where((eb) =>
        eb.or(
          part.map((v) => eb.and([eb('device_id', '=', v.deviceId), eb('geofence_id', '=', v.geofenceId)])),
        ),
      )
      .where(pendingDwell)
      .where('dwell_due_at', '<=', now)
      .execute();
    for (const r of rows) {
      out.push({
        deviceId: r.device_id,
        geofenceId: r.geofence_id,
        workspaceId: r.workspace_id,
        dueAt: new Date(r.dwell_due_at as Date | string),
      });
    }
  }
  return out;
}

/**
 * The device's last known point, a dwell's point: its newest location (devices/last-location.repository.ts),
 * read after its lock, in a statement of its own (see `lockDevices`).
 */
export async function lastKnownPoint(
  trx: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  deviceId: string,
): Promise<KnownPoint | null> {
  const newest = (await newestLocations(trx, capabilities, workspaceId, [deviceId])).get(deviceId);
  return newest ? { lng: newest.lng, lat: newest.lat, locationId: newest.id } : null;
}

export async function markDwelled(
  trx: Executor,
  visits: readonly DueVisit[],
  at: (v: DueVisit) => Date,
): Promise<void> {
  for (const v of visits) {
    await trx
      .updateTable('geofence_presence')
      .set({ dwelled_at: at(v) })
      .where('device_id', '=', v.deviceId)
      .where('geofence_id', '=', v.geofenceId)
      .execute();
  }
}
