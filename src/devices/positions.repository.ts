/**
 * SQL of the map snapshot (GET /devices/positions, ADR 016): every located device of a workspace.
 * The JSON parts a map needs are cut out of the stored JSON by the database (`->`, `->>` and
 * `cast(… as text)` read the same on SQLite and PostgreSQL) and come back as JSON text, so 10,000
 * rows cost no JSON parsing here: positions-json.ts writes them into the answer as they are.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/transaction.ts';

export interface PositionRow {
  id: string;
  name: string;
  externalId: string | null;
  /** JSON text of the GeoJSON Point. */
  point: string;
  /** ISO 8601 text: the position's own timestamp. */
  recordedAt: string;
  /** JSON text: a number or `null`. */
  accuracy: string;
  /** ISO 8601 text: when the position arrived. */
  lastSeenAt: string;
  /** JSON text of the array of geofence ids. */
  insideGeofenceIds: string;
}

/**
 * Up to `limit` devices that have a position, oldest first, in the order of the (workspace_id,
 * created_at) index (devices created together, by one batch, in no particular order among
 * themselves): a tie-break on id would sort every answer again for the sake of the 50,000th device.
 */
export async function devicePositions(
  db: Executor,
  workspaceId: string,
  limit: number,
): Promise<PositionRow[]> {
  const rows = await db
    .selectFrom('devices')
    .select([
      'id',
      'name',
      'external_id',
      'last_seen_at',
      sql<string>`cast(last_location -> 'point' as text)`.as('point'),
      sql<string>`last_location ->> 'timestamp'`.as('recorded_at'),
      sql<string | null>`cast(last_location -> 'accuracy' as text)`.as('accuracy'),
      sql<string>`cast(inside_geofence_ids as text)`.as('inside'),
    ])
    .where('workspace_id', '=', workspaceId)
    .where('last_location', 'is not', null)
    .orderBy('created_at')
    .limit(limit)
    .execute();
  const out: PositionRow[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as (typeof rows)[number];
    const seen = row.last_seen_at;
    out[i] = {
      id: row.id,
      name: row.name,
      externalId: row.external_id,
      point: row.point,
      recordedAt: row.recorded_at,
      accuracy: row.accuracy ?? 'null',
      // SQLite keeps the ISO text it was given, PostgreSQL answers a Date; a row without one (it is
      // written with every position) falls back to the fix time.
      lastSeenAt: seen === null ? row.recorded_at : typeof seen === 'string' ? seen : seen.toISOString(),
      insideGeofenceIds: row.inside,
    };
  }
  return out;
}
