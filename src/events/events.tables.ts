import { bulkTable } from '../db/bulk-table.ts';
import type { JsonColumn, NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';
import type { EventType } from './event-types.ts';

export type { EventType };

export interface GeofenceEventsTable {
  id: string;
  workspace_id: string;
  /** Seed §6.3 form `<geofence_id>_<enter|exit|dwell>_<epoch_seconds>`. */
  event_id: string;
  event_type: EventType;
  device_id: string;
  /** The device's user_id, or the device id when it has none (contract §4.1). */
  user_id: string;
  geofence_id: string;
  geofence_name: string;
  lng: number;
  lat: number;
  location_id: string;
  session_id: string | null;
  occurred_at: TimestampColumn;
  created_at: TimestampColumn;
  /** `{geofence_metadata, event_metadata}` as they were when the event happened. */
  metadata: JsonColumn;
}

/** The transactional outbox (ADR 008): one row per event, claimed by the dispatcher. */
export interface EventOutboxTable {
  id: string;
  workspace_id: string;
  event_row_id: string;
  created_at: TimestampColumn;
  dispatched_at: NullableTimestampColumn;
}

/** The many-row writers of these tables (src/db/bulk-table.ts): named rows, columns declared once. */
export const eventWrites = bulkTable<GeofenceEventsTable>()('geofence_events', {
  id: 'text',
  workspace_id: 'text',
  event_id: 'text',
  event_type: 'text',
  device_id: 'text',
  user_id: 'text',
  geofence_id: 'text',
  geofence_name: 'text',
  lng: 'double',
  lat: 'double',
  location_id: 'text',
  session_id: 'text',
  occurred_at: 'timestamp',
  created_at: 'timestamp',
  metadata: 'json',
});

export const outboxWrites = bulkTable<EventOutboxTable>()('event_outbox', {
  id: 'text',
  workspace_id: 'text',
  event_row_id: 'text',
  created_at: 'timestamp',
  dispatched_at: 'timestamp',
});
