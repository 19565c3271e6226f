import type { BooleanColumn, JsonColumn, TimestampColumn } from '../db/columns.ts';

export interface GeofencesTable {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  external_id: string | null;
  /** Normalised GeoJSON Polygon or our Circle (`FenceGeometry`). */
  geometry: JsonColumn;
  metadata: JsonColumn;
  enabled: BooleanColumn;
  /** `[west, south, east, north]`; west > east for a circle crossing the antimeridian. */
  bbox: JsonColumn;
  vertex_count: number;
  version: number;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

/** The per-workspace change counter of the geofence index (ADR 007). */
export interface GeofenceVersionsTable {
  workspace_id: string;
  version: number;
}
