/**
 * The read of GET /geofences/{id}/devices (contract §4.5): `geofence_presence`, one row per device
 * inside a geofence now (written by ingestion, src/locations/presence.repository.ts; `dwelled_at`
 * set by whichever fires the dwell), joined to the devices, scoped by workspace.
 */
import { toDate, toDateOrNull } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import type { LastLocation } from '../devices/devices.repository.ts';
import { lastLocationOf, newestLocations } from '../devices/last-location.repository.ts';

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
  capabilities: DialectCapabilities,
  workspaceId: string,
  geofenceId: string,
  offset: number,
  limit: number,
): Promise<{ devices: DeviceInside[]; total: number }> {
  const rows = await db
    .selectFrom('geofence_presence as p')
    .innerJoin('devices as d', 'd.id', 'p.device_id')
    .select(['p.device_id', 'p.entered_at', 'p.dwelled_at', 'd.name', 'd.external_id', 'd.user_id'])
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
  // Their last locations: one more statement for the page (last-location.repository.ts).
  const newest = await newestLocations(
    db,
    capabilities,
    workspaceId,
    rows.map((r) => r.device_id),
  );
  return {
    devices: rows.map((row) => {
      const n = newest.get(row.device_id);
      return {
        deviceId: row.device_id,
        name: row.name,
        externalId: row.external_id,
        userId: row.user_id,
        enteredAt: toDate(row.entered_at),
        dwelledAt: toDateOrNull(row.dwelled_at),
        lastSeenAt: n?.receivedAt ?? null,
        lastLocation: n === undefined ? null : lastLocationOf(n),
      };
    }),
    total: Number(count.n),
  };
}
