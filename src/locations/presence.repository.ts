/**
 * Ingestion's SQL of `geofence_presence` (contract §4.5, ADR 015): the stored dwell timers and last
 * known points of the locked devices (read only in workspaces whose geofences set rules), and the
 * rows an ingestion leaves behind: pairs it touched are deleted and, when the device is inside,
 * inserted again; visits stored before that dwelt now get `dwelled_at`.
 */
import { fromJson } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import { chunks, insertRows, type StatementRunner } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import type { DwellState, PresenceRows } from './ingest-plan.ts';
import type { DwellTimer, KnownPoint } from './presence-plan.ts';

const IN_CHUNK = 500;

/** The pending dwell timers of these devices and, for the devices that have one, their last point. */
export async function readDwellState(db: Executor, deviceIds: readonly string[]): Promise<DwellState> {
  const timers = new Map<string, DwellTimer[]>();
  const lastPoints = new Map<string, KnownPoint>();
  for (const part of chunks(deviceIds, IN_CHUNK)) {
    const rows = await db
      .selectFrom('geofence_presence as p')
      .innerJoin('devices as d', 'd.id', 'p.device_id')
      .select(['p.device_id', 'p.geofence_id', 'p.dwell_due_at', 'd.last_location'])
      .where('p.device_id', 'in', part)
      .where('p.dwelled_at', 'is', null)
      .where('p.dwell_due_at', 'is not', null)
      .execute();
    for (const r of rows) {
      if (r.dwell_due_at === null) continue;
      const list = timers.get(r.device_id) ?? [];
      list.push({ geofenceId: r.geofence_id, dueAt: new Date(r.dwell_due_at) });
      timers.set(r.device_id, list);
      const point = knownPoint(r.last_location);
      if (point) lastPoints.set(r.device_id, point);
    }
  }
  return { timers, lastPoints };
}

/** The device's `last_location` as a dwell's point, when it names its location. */
export function knownPoint(raw: unknown): KnownPoint | null {
  const last =
    raw === null || raw === undefined
      ? null
      : fromJson<{
          point?: { coordinates?: [number, number] };
          location_id?: string;
        }>(raw);
  const coordinates = last?.point?.coordinates;
  if (!coordinates || typeof last?.location_id !== 'string') return null;
  return { lng: coordinates[0], lat: coordinates[1], locationId: last.location_id };
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
  await insertRows(
    writes,
    capabilities,
    'geofence_presence',
    [
      { name: 'device_id', type: 'text' },
      { name: 'geofence_id', type: 'text' },
      { name: 'workspace_id', type: 'text' },
      { name: 'entered_at', type: 'timestamp' },
      { name: 'dwell_due_at', type: 'timestamp' },
      { name: 'dwelled_at', type: 'timestamp' },
    ],
    rows.inserts.map((r) => [r.deviceId, r.geofenceId, workspaceId, r.enteredAt, r.dwellDueAt, r.dwelledAt]),
  );
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
