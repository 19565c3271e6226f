/**
 * A device's last location, read from its newest location row (ADR 008, "Device state"): ingestion
 * no longer copies it onto the device row. "Newest" is the largest `recorded_at`, read through the
 * `(device_id, recorded_at)` index; among equal times, the last applied: the larger id on
 * PostgreSQL (ingestion gives a device's locations ids above its newest one's, `uuidv7After`, so
 * ids sort in the order applied across nodes too), the larger rowid on SQLite (its one writer
 * inserts rows in the order applied; the index holds the rowid, so ties cost no sort).
 *
 * The newest row is always an in-order one: an out-of-order location is by definition older than
 * the newest evaluated one, and retention never deletes a device's newest locations
 * (locations.repository.ts).
 */
import { toDate, toIso } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { FirstRowJoin } from '../db/statement-forms.ts';
import { chunks, statement } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import type { LastLocation } from './devices.repository.ts';

/** The newest location of a device: what `last_location` and `last_seen_at` show. */
export interface NewestLocation {
  id: string;
  lng: number;
  lat: number;
  accuracy: number | null;
  recordedAt: Date;
  /** `recordedAt` as ISO 8601 text (`last_location.timestamp`). */
  recordedAtIso: string;
  /** When it arrived: the device's `last_seen_at`. */
  receivedAt: Date;
}

/** The columns of `n` that NewestLocation needs, as `newestLocationOf` reads them. */
export const NEWEST_COLUMNS = 'n.id as n_id, n.lng, n.lat, n.accuracy, n.recorded_at, n.received_at';

/** The join, as alias `n`, of the devices aliased `d` to their newest location. */
export function newestLocationJoin(kind: FirstRowJoin['kind']): FirstRowJoin {
  return {
    kind,
    table: 'locations',
    alias: 'n',
    columns: 'id, lng, lat, accuracy, recorded_at, received_at',
    match: 'device_id = d.id',
    order: 'recorded_at desc',
    tieBreak: { column: 'id', direction: 'desc' },
  };
}

export interface NewestLocationRow {
  n_id: string | null;
  lng: number | null;
  lat: number | null;
  accuracy: number | null;
  recorded_at: Date | string | null;
  received_at: Date | string | null;
}

export function newestLocationOf(row: NewestLocationRow): NewestLocation | null {
  if (row.n_id === null || row.recorded_at === null || row.received_at === null) return null;
  return {
    id: row.n_id,
    lng: Number(row.lng),
    lat: Number(row.lat),
    accuracy: row.accuracy === null ? null : Number(row.accuracy),
    recordedAt: toDate(row.recorded_at),
    recordedAtIso: toIso(row.recorded_at),
    receivedAt: toDate(row.received_at),
  };
}

/** The API's `last_location` of a device whose newest location is `n`. */
export function lastLocationOf(n: NewestLocation): LastLocation {
  return {
    point: { type: 'Point', coordinates: [n.lng, n.lat] },
    timestamp: n.recordedAtIso,
    accuracy: n.accuracy,
    location_id: n.id,
  };
}

const CHUNK = 1_000;

/**
 * The newest location of each of these devices of the workspace that has one. Ids of other
 * workspaces are absent. One statement per 1,000 ids; the workspace is a residual filter (the ids
 * pick the rows, see `residualEquals`).
 */
export async function newestLocations(
  db: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  deviceIds: readonly string[],
): Promise<Map<string, NewestLocation>> {
  const out = new Map<string, NewestLocation>();
  for (const part of chunks(deviceIds, CHUNK)) {
    const b = statement(capabilities).sql(`select d.id, ${NEWEST_COLUMNS} from devices d `);
    capabilities.statements.firstRowJoin(b, newestLocationJoin('join'));
    b.sql(' where ');
    capabilities.statements.inList(b, 'd.id', part);
    b.sql(" and d.workspace_id || '' = ").value(workspaceId);
    const { rows } = await db.executeQuery(b.compile<NewestLocationRow & { id: string }>());
    for (const row of rows) {
      const newest = newestLocationOf(row);
      if (newest) out.set(row.id, newest);
    }
  }
  return out;
}
