/**
 * A device's last location: its row in `device_last_locations` (ADR 008, "Device state"), written
 * by the ingestion that applied it, since the newest location itself may still be staged (not yet
 * in the per-device history index). "Newest" is the largest `recorded_at`; among equal times, the
 * last applied (equal is in order). Out-of-order locations never replace it, and retention never
 * deletes the location it names, nor others of its time (locations.repository.ts).
 */
import { toDate, toIso } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { StatementBuilder } from '../db/statement-builder.ts';
import { chunks, type StatementRunner, statement } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import type { LastLocation } from './devices.repository.ts';
import { lastLocationWrites } from './devices.tables.ts';

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
export const NEWEST_COLUMNS = 'n.location_id as n_id, n.lng, n.lat, n.accuracy, n.recorded_at, n.received_at';

/** Joins (`join` drops devices without one, `left join` keeps them) the devices aliased `d` to their newest location, as `n`. */
export function joinNewestLocation(b: StatementBuilder, kind: 'join' | 'left join'): void {
  b.sql(` ${kind} device_last_locations n on n.device_id = d.id`);
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
    const b = statement(capabilities).sql(`select d.id, ${NEWEST_COLUMNS} from devices d`);
    joinNewestLocation(b, 'join');
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

/** A device's state after an ingestion that applied an in-order location of it. */
export interface AppliedNewest {
  id: string;
  lastLocation: LastLocation | null;
  /** When that location arrived. */
  lastSeenAt: Date;
}

/**
 * Writes the newest location of each device that had an in-order one (one statement per chunk; a
 * device appears once). Its row is replaced whole: an in-order location is never older than the
 * one it replaces.
 */
export async function saveNewestLocations(
  db: StatementRunner,
  capabilities: DialectCapabilities,
  states: readonly AppliedNewest[],
): Promise<void> {
  const applied = states.filter((s) => s.lastLocation !== null);
  await lastLocationWrites.insertOrReplace(
    db,
    capabilities,
    applied,
    (s) => {
      const l = s.lastLocation as LastLocation;
      return {
        device_id: s.id,
        location_id: l.location_id ?? '',
        lng: l.point.coordinates[0],
        lat: l.point.coordinates[1],
        accuracy: l.accuracy,
        recorded_at: l.timestamp,
        received_at: s.lastSeenAt,
      };
    },
    'device_id',
  );
}
