/** SQL of the map snapshot (GET /devices/positions, ADR 016): every located device of a workspace. */
import type { Executor } from '../db/transaction.ts';
import type { LastLocation } from './devices.repository.ts';

export interface DevicePosition {
  id: string;
  name: string;
  externalId: string | null;
  lastLocation: LastLocation;
  /** ISO 8601. */
  lastSeenAt: string;
  insideGeofenceIds: string[];
}

/**
 * Up to `limit` devices that have a position, oldest first (created_at, then id), through the
 * (workspace_id, created_at) index. Only the columns a map draws are read.
 */
export async function devicePositions(
  db: Executor,
  workspaceId: string,
  limit: number,
): Promise<DevicePosition[]> {
  const rows = await db
    .selectFrom('devices')
    .select(['id', 'name', 'external_id', 'last_location', 'last_seen_at', 'inside_geofence_ids'])
    .where('workspace_id', '=', workspaceId)
    .where('last_location', 'is not', null)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
  const out: DevicePosition[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as (typeof rows)[number];
    const location = parsed<LastLocation>(row.last_location);
    const seen = row.last_seen_at;
    out[i] = {
      id: row.id,
      name: row.name,
      externalId: row.external_id,
      lastLocation: location,
      // SQLite keeps the ISO text it was given, PostgreSQL answers a Date; a row written before
      // last_seen_at existed falls back to the fix time.
      lastSeenAt: seen === null ? location.timestamp : typeof seen === 'string' ? seen : seen.toISOString(),
      insideGeofenceIds: parsed<string[]>(row.inside_geofence_ids),
    };
  }
  return out;
}

/** JSON text on SQLite, parsed jsonb on PostgreSQL. */
function parsed<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
