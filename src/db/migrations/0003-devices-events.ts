import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/**
 * Devices, locations, geofence events with their transactional outbox, tracking sessions and the
 * monthly event usage counters (contract §4, ADR 008).
 */
export const devicesEvents: Migration = {
  name: '0003_devices_events',
  async up(db, { dialect, types: t }) {
    await db.schema
      .createTable('devices')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('external_id', 'text')
      // The customer's own identifier of the person or asset (free text), `data.user_id` in payloads.
      .addColumn('user_id', 'text')
      .addColumn('metadata', t.json, (c) => c.notNull())
      // {point, timestamp, accuracy} of the newest evaluated location.
      .addColumn('last_location', t.json)
      .addColumn('last_seen_at', t.timestamp)
      // Timestamp of the newest evaluated location: older ones arriving later are out of order.
      .addColumn('last_evaluated_at', t.timestamp)
      // The enabled geofences containing the newest evaluated location (index ids, sorted).
      .addColumn('inside_geofence_ids', t.json, (c) => c.notNull())
      // Denormalised pointer to the active tracking session, so ingestion needs no extra lookup;
      // written only while the device row is locked (session start/stop).
      .addColumn('active_session_id', 'text')
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
    if (dialect === 'postgres') {
      // Every ingestion rewrites its devices' tracking columns, none of them indexed: room left on
      // each page lets PostgreSQL update in place (HOT) instead of adding an entry to every index.
      await sql`alter table devices set (fillfactor = 70)`.execute(db);
    }
    // NULLs are distinct in unique indexes on both dialects: any number of devices without one.
    await db.schema
      .createIndex('devices_external_id_uq')
      .on('devices')
      .columns(['workspace_id', 'external_id'])
      .unique()
      .execute();
    await db.schema
      .createIndex('devices_workspace_created_idx')
      .on('devices')
      .columns(['workspace_id', 'created_at'])
      .execute();

    await db.schema
      .createTable('tracking_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('device_id', 'text', (c) => c.notNull().references('devices.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('metadata', t.json, (c) => c.notNull())
      .addColumn('started_at', t.timestamp, (c) => c.notNull())
      .addColumn('ended_at', t.timestamp)
      .addColumn('location_count', 'integer', (c) => c.notNull())
      .addColumn('distance_m', t.double, (c) => c.notNull())
      .addColumn('duration_s', 'integer', (c) => c.notNull())
      .addColumn('event_count', 'integer', (c) => c.notNull())
      .addColumn('geofence_ids_visited', t.json, (c) => c.notNull())
      // The previous in-order point, for the next distance step.
      .addColumn('last_lng', t.double)
      .addColumn('last_lat', t.double)
      .addColumn('last_recorded_at', t.timestamp)
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .execute();
    // The database's own guarantee of "one active session per device" (the service checks first
    // under the device lock and maps a violation here to SESSION_ACTIVE).
    await db.schema
      .createIndex('tracking_sessions_one_active_uq')
      .on('tracking_sessions')
      .column('device_id')
      .unique()
      .where(sql.ref('status'), '=', 'active')
      .execute();
    await db.schema
      .createIndex('tracking_sessions_workspace_started_idx')
      .on('tracking_sessions')
      .columns(['workspace_id', 'started_at'])
      .execute();
    await db.schema
      .createIndex('tracking_sessions_device_started_idx')
      .on('tracking_sessions')
      .columns(['device_id', 'started_at'])
      .execute();

    // No foreign key to workspaces or sessions: the device cascade covers deletion, and every
    // foreign key is one more lookup per inserted row on the hottest table.
    await db.schema
      .createTable('locations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('device_id', 'text', (c) => c.notNull().references('devices.id').onDelete('cascade'))
      .addColumn('session_id', 'text')
      .addColumn('lng', t.double, (c) => c.notNull())
      .addColumn('lat', t.double, (c) => c.notNull())
      .addColumn('accuracy', t.double)
      .addColumn('speed', t.double)
      .addColumn('heading', t.double)
      .addColumn('altitude', t.double)
      .addColumn('metadata', t.json, (c) => c.notNull())
      .addColumn('recorded_at', t.timestamp, (c) => c.notNull())
      .addColumn('received_at', t.timestamp, (c) => c.notNull())
      .addColumn('out_of_order', t.boolean, (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('locations_device_recorded_idx')
      .on('locations')
      .columns(['device_id', 'recorded_at'])
      .execute();
    await db.schema
      .createIndex('locations_workspace_received_idx')
      .on('locations')
      .columns(['workspace_id', 'received_at'])
      .execute();
    // Partial: most locations belong to no session, and every index entry is work on the hottest insert.
    await db.schema
      .createIndex('locations_session_recorded_idx')
      .on('locations')
      .columns(['session_id', 'recorded_at'])
      .where(sql.ref('session_id'), 'is not', null)
      .execute();

    // Events are history: they outlive their device, geofence and (after retention) location, so
    // only the workspace is a foreign key.
    await db.schema
      .createTable('geofence_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      // Seed §6.3 form `<geofence_id>_<enter|exit>_<epoch_seconds>`; not unique across devices.
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('device_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('geofence_id', 'text', (c) => c.notNull())
      .addColumn('geofence_name', 'text', (c) => c.notNull())
      .addColumn('lng', t.double, (c) => c.notNull())
      .addColumn('lat', t.double, (c) => c.notNull())
      .addColumn('location_id', 'text', (c) => c.notNull())
      .addColumn('session_id', 'text')
      .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      // {geofence_metadata, event_metadata}, frozen at the time of the event.
      .addColumn('metadata', t.json, (c) => c.notNull())
      .execute();
    for (const [name, columns] of [
      ['geofence_events_workspace_occurred_idx', ['workspace_id', 'occurred_at']],
      ['geofence_events_device_occurred_idx', ['workspace_id', 'device_id', 'occurred_at']],
      ['geofence_events_geofence_occurred_idx', ['workspace_id', 'geofence_id', 'occurred_at']],
    ] as const) {
      await db.schema
        .createIndex(name)
        .on('geofence_events')
        .columns([...columns])
        .execute();
    }

    // The transactional outbox (ADR 008): one row per event, written in the event's transaction.
    await db.schema
      .createTable('event_outbox')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('event_row_id', 'text', (c) =>
        c.notNull().unique().references('geofence_events.id').onDelete('cascade'),
      )
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('dispatched_at', t.timestamp)
      .execute();
    // The dispatcher scans only undispatched rows, oldest first.
    await db.schema
      .createIndex('event_outbox_pending_idx')
      .on('event_outbox')
      .column('created_at')
      .where(sql.ref('dispatched_at'), 'is', null)
      .execute();

    await db.schema
      .createTable('usage_counters')
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      // 'YYYY-MM' in UTC.
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('events', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('usage_counters_pk', ['workspace_id', 'period'])
      .execute();
  },
};
