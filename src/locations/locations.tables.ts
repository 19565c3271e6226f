import type { Generated } from 'kysely';
import { bulkTable } from '../db/bulk-table.ts';
import type { BooleanColumn, JsonColumn, TimestampColumn } from '../db/columns.ts';

export interface LocationsTable {
  id: string;
  workspace_id: string;
  device_id: string;
  session_id: string | null;
  lng: number;
  lat: number;
  accuracy: number | null;
  speed: number | null;
  heading: number | null;
  altitude: number | null;
  metadata: JsonColumn;
  /** The location's own timestamp (the device's clock, or the receive time when absent). */
  recorded_at: TimestampColumn;
  received_at: TimestampColumn;
  /** Older than the device's newest evaluated location when it arrived: stored, not evaluated. */
  out_of_order: BooleanColumn;
}

/**
 * Locations as groups of single POSTs append them, before the merge moves them into `locations` in device
 * order (src/locations/history-merge.ts, migration 0020). `seq` is the arrival order and the only key.
 */
export interface LocationsStagedTable extends LocationsTable {
  seq: Generated<number>;
}

const LOCATION_COLUMNS = {
  id: 'text',
  workspace_id: 'text',
  device_id: 'text',
  session_id: 'text',
  lng: 'double',
  lat: 'double',
  accuracy: 'double',
  speed: 'double',
  heading: 'double',
  altitude: 'double',
  metadata: 'json',
  recorded_at: 'timestamp',
  received_at: 'timestamp',
  out_of_order: 'boolean',
} as const;

/** The many-row writer of locations (src/db/bulk-table.ts): a batch's, into the per-device history. */
export const locationWrites = bulkTable<LocationsTable>()('locations', LOCATION_COLUMNS);

/** The same rows appended to the staged history: a group of single POSTs' (ADR 008). */
export const stagedLocationWrites = bulkTable<LocationsStagedTable>()('locations_staged', LOCATION_COLUMNS);
