/**
 * SQL of the map snapshot (GET /devices/positions, ADR 016): every located device of a workspace,
 * with its newest location (devices/last-location.repository.ts). The inside-set comes back as the
 * JSON text it is stored as and the point is printed here, so 10,000 rows cost no JSON parsing:
 * positions-json.ts writes them into the answer as they are.
 */
import { toIso } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import { statement } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';
import { joinNewestLocation, NEWEST_COLUMNS, type NewestLocationRow } from './last-location.repository.ts';

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
  capabilities: DialectCapabilities,
  workspaceId: string,
  limit: number,
): Promise<PositionRow[]> {
  // One statement: each device joined to its newest-location row (by its key); devices without one
  // have no position and drop out.
  const b = statement(capabilities).sql(
    `select d.id, d.name, d.external_id, cast(d.inside_geofence_ids as text) as inside, ${NEWEST_COLUMNS} from devices d`,
  );
  joinNewestLocation(b, 'join');
  b.sql(' where d.workspace_id = ').value(workspaceId).sql(' order by d.created_at limit ').value(limit);
  const { rows } = await db.executeQuery(
    b.compile<NewestLocationRow & { id: string; name: string; external_id: string | null; inside: string }>(),
  );
  const out: PositionRow[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as (typeof rows)[number];
    out[i] = {
      id: row.id,
      name: row.name,
      externalId: row.external_id,
      // Numbers print as JSON.stringify prints them: the same text GET /devices/{id} shows.
      point: `{"type":"Point","coordinates":[${Number(row.lng)},${Number(row.lat)}]}`,
      recordedAt: toIso(row.recorded_at as Date | string),
      accuracy: row.accuracy === null ? 'null' : String(Number(row.accuracy)),
      lastSeenAt: toIso(row.received_at as Date | string),
      insideGeofenceIds: row.inside,
    };
  }
  return out;
}
