/**
 * Ingestion's SQL of `geofence_presence` (contract §4.5, ADR 015): the stored dwell timers and last
 * known points of the locked devices (read only in workspaces whose geofences set rules), and the
 * rows an ingestion leaves behind: pairs it touched are deleted and, when the device is inside,
 * inserted again; visits stored before that dwelt now get `dwelled_at`.
 */
import type { DialectCapabilities } from '../db/database.ts';
import { chunks, type StatementRunner } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import { newestLocations } from '../devices/last-location.repository.ts';
import { presenceWrites } from '../geofences/geofences.tables.ts';
import type { DwellState, PresenceRows } from './ingest-plan.ts';
import type { DwellTimer, KnownPoint } from './presence-plan.ts';

const IN_CHUNK = 500;

/**
 * The pending dwell timers of these devices and, for the devices that have one, their last known
 * point: their newest location (devices/last-location.repository.ts).
 */
export async function readDwellState(
  db: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  deviceIds: readonly string[],
): Promise<DwellState> {
  const timers = new Map<string, DwellTimer[]>();
  for (const part of chunks(deviceIds, IN_CHUNK)) {
    const rows = await db
      .selectFrom('geofence_presence')
      .select(['device_id', 'geofence_id', 'dwell_due_at'])
      .where('device_id', 'in', part)
      .where('dwelled_at', 'is', null)
      .where('dwell_due_at', 'is not', null)
      .execute();
    for (const r of rows) {
      if (r.dwell_due_at === null) continue;
      const list = timers.get(r.device_id) ?? [];
      list.push({ geofenceId: r.geofence_id, dueAt: new Date(r.dwell_due_at) });
      timers.set(r.device_id, list);
    }
  }
  const lastPoints = new Map<string, KnownPoint>();
  if (timers.size > 0) {
    const newest = await newestLocations(db, capabilities, workspaceId, [...timers.keys()]);
    for (const [id, n] of newest) lastPoints.set(id, { lng: n.lng, lat: n.lat, locationId: n.id });
  }
  return { timers, lastPoints };
}

/**
 * Writes `rows` through `writes` (on PostgreSQL they travel with the COMMIT); `trx` only builds the
 * statements. Pairs are matched one `(device_id = ? and geofence_id = ?)` term each, bound values.
 */
export async function writePresence(
  trx: Executor,
  writes: StatementRunner,
  capabilities: DialectCapabilities,
  workspaceId: string,
  rows: PresenceRows,
): Promise<void> {
  for (const part of chunks(rows.deletes, IN_CHUNK)) {
    const statement = trx
      .deleteFrom('geofence_presence')
      .where((eb) =>
        eb.or(part.map(([d, g]) => eb.and([eb('device_id', '=', d), eb('geofence_id', '=', g)]))),
      )
      .compile();
    await writes.executeQuery(statement);
  }
  await presenceWrites.insert(writes, capabilities, rows.inserts, (r) => ({
    device_id: r.deviceId,
    geofence_id: r.geofenceId,
    workspace_id: workspaceId,
    entered_at: r.enteredAt,
    dwell_due_at: r.dwellDueAt,
    dwelled_at: r.dwelledAt,
  }));
  for (const d of rows.dwelled) {
    const statement = trx
      .updateTable('geofence_presence')
      .set({ dwelled_at: d.at })
      .where('device_id', '=', d.deviceId)
      .where('geofence_id', '=', d.geofenceId)
      .compile();
    await writes.executeQuery(statement);
  }
}
