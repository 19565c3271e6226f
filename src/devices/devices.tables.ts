import { bulkTable, bulkUpdate } from '../db/bulk-table.ts';
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
   * times) is the device's row in `device_last_locations` (last-location.repository.ts).
   */
  inside_geofence_ids: JsonColumn;
  active_session_id: string | null;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

/** Ingestion's many-row update of the devices whose inside-set changed (src/db/bulk-table.ts). */
export const insideSetWrites = bulkUpdate<DevicesTable>()('devices', { inside_geofence_ids: 'json' });

/**
 * Each device's newest in-order location (migration 0020): one narrow row per device, written by
 * the ingestion that applied it, so that a group's devices share a few pages at commit.
 */
export interface DeviceLastLocationsTable {
  device_id: string;
  location_id: string;
  lng: number;
  lat: number;
  accuracy: number | null;
  /** The newest evaluated time: the next location older than it is out of order. */
  recorded_at: TimestampColumn;
  /** When it arrived: the device's `last_seen_at`. */
  received_at: TimestampColumn;
}

/** Ingestion's many-row upsert of its devices' newest locations. */
export const lastLocationWrites = bulkTable<DeviceLastLocationsTable>()('device_last_locations', {
  device_id: 'text',
  location_id: 'text',
  lng: 'double',
  lat: 'double',
  accuracy: 'double',
  recorded_at: 'timestamp',
  received_at: 'timestamp',
});
