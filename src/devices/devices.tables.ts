import type {
  JsonColumn,
  NullableJsonColumn,
  NullableTimestampColumn,
  TimestampColumn,
} from '../db/columns.ts';

export interface DevicesTable {
  id: string;
  workspace_id: string;
  name: string;
  external_id: string | null;
  /** The customer's own identifier of the person or asset carrying the device (free text). */
  user_id: string | null;
  metadata: JsonColumn;
  /** `{point, timestamp, accuracy}` of the newest evaluated location, or null. */
  last_location: NullableJsonColumn;
  last_seen_at: NullableTimestampColumn;
  /** Timestamp of the newest evaluated location; older arrivals are out of order. */
  last_evaluated_at: NullableTimestampColumn;
  /** Sorted ids of the enabled geofences containing the newest evaluated location. */
  inside_geofence_ids: JsonColumn;
  active_session_id: string | null;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}
