import { bulkUpdate } from '../db/bulk-table.ts';
import type { JsonColumn, TimestampColumn } from '../db/columns.ts';

export interface DevicesTable {
  id: string;
  workspace_id: string;
  name: string;
  external_id: string | null;
  /** The customer's own identifier of the person or asset carrying the device (free text). */
  user_id: string | null;
  metadata: JsonColumn;
  /**
   * Sorted ids of the enabled geofences containing the newest evaluated location, written only
   * when it changes. The newest location itself (last location, last seen and last evaluated
   * times) is the device's newest location row (last-location.repository.ts, migration 0012).
   */
  inside_geofence_ids: JsonColumn;
  active_session_id: string | null;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

/** Ingestion's many-row update of the devices whose inside-set changed (src/db/bulk-table.ts). */
export const insideSetWrites = bulkUpdate<DevicesTable>()('devices', { inside_geofence_ids: 'json' });
