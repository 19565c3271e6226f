/**
 * The JSON text of GET /devices/positions (ADR 016), written directly: up to 50,000 features in one
 * answer, where building objects and serialising them again would cost more than the query. The
 * text matches DevicePositionsSchema (test/devices/positions.test.ts compares it with GET
 * /devices/{id}). Names and external ids, which users write, are escaped by JSON.stringify; ids
 * (UUIDs) and timestamps (ISO 8601) are the service's own and need no escaping; the JSON parts come
 * from the database as text that ingestion wrote with JSON.stringify (positions.repository.ts).
 */
import type { PositionRow } from './positions.repository.ts';

export function positionsJson(rows: readonly PositionRow[], truncated: boolean): string {
  const features = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as PositionRow;
    features[i] =
      `{"type":"Feature","id":"${r.id}","geometry":${r.point},"properties":{` +
      `"name":${JSON.stringify(r.name)},"external_id":${r.externalId === null ? 'null' : JSON.stringify(r.externalId)},` +
      `"last_seen_at":"${r.lastSeenAt}","recorded_at":"${r.recordedAt}",` +
      `"accuracy":${r.accuracy},"inside_geofence_ids":${r.insideGeofenceIds}}}`;
  }
  return `{"type":"FeatureCollection","features":[${features.join(',')}],"truncated":${truncated}}`;
}
