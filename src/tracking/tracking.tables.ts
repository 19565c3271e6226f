import { bulkUpdate } from '../db/bulk-table.ts';
import type { JsonColumn, NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';

export type SessionStatus = 'active' | 'completed';

export interface TrackingSessionsTable {
  id: string;
  workspace_id: string;
  device_id: string;
  status: SessionStatus;
  metadata: JsonColumn;
  started_at: TimestampColumn;
  ended_at: NullableTimestampColumn;
  location_count: number;
  distance_m: number;
  duration_s: number;
  event_count: number;
  /** Geofence ids in the order they were first seen inside during the session. */
  geofence_ids_visited: JsonColumn;
  /** The previous in-order point, from which the next distance step is measured. */
  last_lng: number | null;
  last_lat: number | null;
  last_recorded_at: NullableTimestampColumn;
  created_at: TimestampColumn;
}

/** Ingestion's many-row update of the sessions' running summaries (src/db/bulk-table.ts). */
export const sessionSummaryWrites = bulkUpdate<TrackingSessionsTable>()('tracking_sessions', {
  location_count: 'integer',
  distance_m: 'double',
  duration_s: 'integer',
  event_count: 'integer',
  geofence_ids_visited: 'json',
  last_lng: 'double',
  last_lat: 'double',
  last_recorded_at: 'timestamp',
});
