/**
 * SQL for `geofence_presence` (contract §4.5): one row per device inside a geofence now. Ingestion
 * writes a row with the enter and deletes it with the exit; the dwell worker sets `dwelled_at`.
 * Here: the write of a visit and the read of GET /geofences/{id}/devices, scoped by workspace.
 */
import { fromJson, toDate, toDateOrNull } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';
import type { LastLocation } from '../devices/devices.repository.ts';

/** A visit as ingestion records it: who entered where, when, and when its dwell is due. */
export interface Presence {
  deviceId: string;
  geofenceId: string;
  workspaceId: string;
  enteredAt: Date;
  /** Enter time + the geofence's `dwell_seconds`; null when it has no dwell rule. */
  dwellDueAt: Date | null;
}

/**
 * Records that a device is inside a geofence from `enteredAt`. Ingestion calls it in the
 * transaction of the enter event (one row per device and geofence: the primary key refuses a
 * second visit that was not ended by an exit).
 */
export async function insertPresence(db: Executor, presence: Presence): Promise<void> {
  await db
    .insertInto('geofence_presence')
    .values({
      device_id: presence.deviceId,
      geofence_id: presence.geofenceId,
      workspace_id: presence.workspaceId,
      entered_at: presence.enteredAt,
      dwell_due_at: presence.dwellDueAt,
      dwelled_at: null,
      lease_until: null,
      lease_owner: null,
    })
    .execute();
}

/** A device inside a geofence now, with what GET /geofences/{id}/devices shows of it. */
export interface DeviceInside {
  deviceId: string;
  name: string;
  externalId: string | null;
  userId: string | null;
  enteredAt: Date;
  /** When its dwell event happened; null before (or without a dwell rule). */
  dwelledAt: Date | null;
  lastSeenAt: Date | null;
  lastLocation: LastLocation | null;
}

/**
 * A page of the devices inside geofence `geofenceId` of the workspace, the latest to enter first
 * (ties by device id, so pages are stable), and how many there are.
 */
export async function listDevicesInside(
  db: Executor,
  workspaceId: string,
  geofenceId: string,
  offset: number,
  limit: number,
): Promise<{ devices: DeviceInside[]; total: number }> {
  const rows = await db
    .selectFrom('geofence_presence as p')
    .innerJoin('devices as d', 'd.id', 'p.device_id')
    .select([
      'p.device_id',
      'p.entered_at',
      'p.dwelled_at',
      'd.name',
      'd.external_id',
      'd.user_id',
      'd.last_seen_at',
      'd.last_location',
    ])
    .where('p.workspace_id', '=', workspaceId)
    .where('p.geofence_id', '=', geofenceId)
    .where('d.workspace_id', '=', workspaceId)
    .orderBy('p.entered_at', 'desc')
    .orderBy('p.device_id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('geofence_presence as p')
    .innerJoin('devices as d', 'd.id', 'p.device_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('p.workspace_id', '=', workspaceId)
    .where('p.geofence_id', '=', geofenceId)
    .where('d.workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return {
    devices: rows.map((row) => ({
      deviceId: row.device_id,
      name: row.name,
      externalId: row.external_id,
      userId: row.user_id,
      enteredAt: toDate(row.entered_at),
      dwelledAt: toDateOrNull(row.dwelled_at),
      lastSeenAt: toDateOrNull(row.last_seen_at),
      lastLocation: row.last_location === null ? null : fromJson<LastLocation>(row.last_location),
    })),
    total: Number(count.n),
  };
}
