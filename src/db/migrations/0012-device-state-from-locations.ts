import { sql } from 'kysely';
import { uuidv7 } from '../../shared/ids.ts';
import type { Migration } from './migration.ts';

/**
 * A device's last location, last seen and last evaluated times are its newest location row from
 * now on (ADR 008, "Device state"); ingestion no longer rewrites the device row for every location.
 * The three columns holding copies of them are dropped (`inside_geofence_ids` stays, written only
 * when it changes).
 *
 * Every device keeps its answer. The newest row by `recorded_at desc, id desc` already is the
 * location the copy describes, except where retention deleted that location (it now keeps each
 * device's newest one): such a device gets it back as a location row built from the copy, with
 * the copy's point, time, accuracy, arrival time and id (when the copy names one), no speed,
 * heading, altitude, metadata or session. Its history therefore shows that one location again.
 *
 * A few statements per located device: a one-time cost proportional to the devices, not the history.
 */
export const deviceStateFromLocations: Migration = {
  name: '0012_device_state_from_locations',
  async up(db, { dialect }) {
    // Ties as the readers break them (devices/last-location.repository.ts).
    const tieBreak = sql.raw(dialect === 'sqlite' ? 'rowid' : 'id');
    const devices = await sql<{
      id: string;
      workspace_id: string;
      last_location: unknown;
      last_seen_at: Date | string | null;
    }>`select id, workspace_id, last_location, last_seen_at from devices
       where last_location is not null`.execute(db);
    for (const device of devices.rows) {
      const raw = device.last_location;
      const copy = (typeof raw === 'string' ? JSON.parse(raw) : raw) as {
        point: { coordinates: [number, number] };
        timestamp: string;
        accuracy: number | null;
        location_id?: string;
      };
      const seenAt = iso(device.last_seen_at ?? copy.timestamp);
      const newest = await sql<{
        id: string;
        lng: number;
        lat: number;
        accuracy: number | null;
        recorded_at: Date | string;
        received_at: Date | string;
      }>`select id, lng, lat, accuracy, recorded_at, received_at from locations
         where device_id = ${device.id} order by recorded_at desc, ${tieBreak} desc limit 1`.execute(db);
      const row = newest.rows[0];
      const [lng, lat] = copy.point.coordinates;
      if (
        row &&
        Number(row.lng) === lng &&
        Number(row.lat) === lat &&
        (row.accuracy === null ? null : Number(row.accuracy)) === copy.accuracy &&
        iso(row.recorded_at) === iso(copy.timestamp) &&
        iso(row.received_at) === seenAt
      ) {
        continue;
      }
      // The copy's location is gone (or was never stored under its id): store it again. It must
      // come after any remaining location with the same time, so that it is the newest: a larger
      // id (PostgreSQL), a larger rowid (SQLite: inserted last).
      let id = copy.location_id ?? uuidv7();
      const named = await sql<{ id: string }>`select id from locations where id = ${id}`.execute(db);
      if (named.rows.length > 0) continue; // still stored, not the newest: see ADR 008 ("Device state")
      const tied = await sql<{ id: string }>`select max(id) as id from locations
         where device_id = ${device.id} and recorded_at = ${new Date(copy.timestamp)}`.execute(db);
      const tiedId = tied.rows[0]?.id ?? null;
      if (tiedId !== null && tiedId >= id)
        id = uuidv7(Number.parseInt(tiedId.slice(0, 8) + tiedId.slice(9, 13), 16) + 1);
      await sql`insert into locations (id, workspace_id, device_id, session_id, lng, lat, accuracy, speed,
          heading, altitude, metadata, recorded_at, received_at, out_of_order)
        values (${id}, ${device.workspace_id}, ${device.id}, ${null}, ${lng}, ${lat}, ${copy.accuracy},
          ${null}, ${null}, ${null}, ${'{}'}, ${new Date(copy.timestamp)}, ${new Date(seenAt)}, ${false})`.execute(
        db,
      );
    }
    for (const column of ['last_location', 'last_seen_at', 'last_evaluated_at']) {
      await db.schema.alterTable('devices').dropColumn(column).execute();
    }
  },
};

function iso(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
