import { bulkTable, bulkUpdate } from '../db/bulk-table.ts';
import type { BooleanColumn, JsonColumn, NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';

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
  /** Contract §4.5 rules; null = off (the behaviour of §4.3). */
  dwell_seconds: number | null;
  exit_buffer_m: number | null;
  max_accuracy_m: number | null;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

/** The per-workspace change counter of the geofence index (ADR 007). */
export interface GeofenceVersionsTable {
  workspace_id: string;
  version: number;
}

/**
 * A device inside a geofence now (contract §4.5): written by ingestion with the enter, deleted with
 * the exit. `dwell_due_at` is the visit's dwell timer (null when the geofence has no dwell rule);
 * `dwelled_at` is set once its dwell event exists (ADR 015).
 */
export interface GeofencePresenceTable {
  device_id: string;
  geofence_id: string;
  workspace_id: string;
  entered_at: TimestampColumn;
  dwell_due_at: NullableTimestampColumn;
  dwelled_at: NullableTimestampColumn;
}

/** The many-row writers of these tables (src/db/bulk-table.ts): named rows, columns declared once. */
export const geofenceWrites = bulkTable<GeofencesTable>()('geofences', {
  id: 'text',
  workspace_id: 'text',
  name: 'text',
  description: 'text',
  external_id: 'text',
  geometry: 'json',
  metadata: 'json',
  enabled: 'boolean',
  bbox: 'json',
  vertex_count: 'integer',
  version: 'integer',
  dwell_seconds: 'integer',
  exit_buffer_m: 'double',
  max_accuracy_m: 'double',
  created_at: 'timestamp',
  updated_at: 'timestamp',
});

/**
 * The columns a batch's upsert replaces by id: all but `external_id`, `created_at` and the row
 * version, which the statement raises itself (geofences.repository.ts `replaceGeofences`).
 */
export const geofenceReplacements = bulkUpdate<GeofencesTable>()('geofences', {
  name: 'text',
  description: 'text',
  geometry: 'json',
  bbox: 'json',
  vertex_count: 'integer',
  metadata: 'json',
  enabled: 'boolean',
  dwell_seconds: 'integer',
  exit_buffer_m: 'double',
  max_accuracy_m: 'double',
  updated_at: 'timestamp',
});

export const presenceWrites = bulkTable<GeofencePresenceTable>()('geofence_presence', {
  device_id: 'text',
  geofence_id: 'text',
  workspace_id: 'text',
  entered_at: 'timestamp',
  dwell_due_at: 'timestamp',
  dwelled_at: 'timestamp',
});
