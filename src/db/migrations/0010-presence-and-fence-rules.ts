import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/**
 * Contract §4.5: the three optional rules of a geofence (dwell, exit buffer, accuracy gate) and
 * `geofence_presence`, one row per device inside a geofence now: when it entered, when its dwell
 * is due, when it dwelt. The dwell timer is that row (ADR 015). Existing inside sets are copied
 * in, entered at their latest enter event (or the device's last evaluation when none is kept).
 */
export const presenceAndFenceRules: Migration = {
  name: '0010_presence_and_fence_rules',
  async up(db, { types: t }) {
    await db.schema.alterTable('geofences').addColumn('dwell_seconds', 'integer').execute();
    await db.schema.alterTable('geofences').addColumn('exit_buffer_m', t.double).execute();
    await db.schema.alterTable('geofences').addColumn('max_accuracy_m', t.double).execute();

    await db.schema
      .createTable('geofence_presence')
      .addColumn('device_id', 'text', (c) => c.notNull().references('devices.id').onDelete('cascade'))
      .addColumn('geofence_id', 'text', (c) => c.notNull().references('geofences.id').onDelete('cascade'))
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('entered_at', t.timestamp, (c) => c.notNull())
      .addColumn('dwell_due_at', t.timestamp)
      .addColumn('dwelled_at', t.timestamp)
      .addPrimaryKeyConstraint('geofence_presence_pk', ['device_id', 'geofence_id'])
      .execute();
    await db.schema
      .createIndex('geofence_presence_geofence_idx')
      .on('geofence_presence')
      .columns(['geofence_id', 'entered_at'])
      .execute();
    // The dwell timers: only visits whose dwell is still to come.
    await db.schema
      .createIndex('geofence_presence_dwell_due_idx')
      .on('geofence_presence')
      .columns(['dwell_due_at', 'device_id'])
      .where(sql.ref('dwelled_at'), 'is', null)
      .execute();

    // Backfill from the devices' inside sets (JSON arrays; read and written here, both dialects).
    const devices = await sql<{
      id: string;
      workspace_id: string;
      inside_geofence_ids: unknown;
      last_evaluated_at: unknown;
    }>`select id, workspace_id, inside_geofence_ids, last_evaluated_at from devices
       where inside_geofence_ids is not null`.execute(db);
    for (const device of devices.rows) {
      const raw = device.inside_geofence_ids;
      const ids = (typeof raw === 'string' ? JSON.parse(raw) : raw) as string[] | null;
      if (!ids || ids.length === 0) continue;
      for (const geofenceId of ids) {
        const latest = await sql<{ occurred_at: unknown }>`select max(occurred_at) as occurred_at
          from geofence_events where device_id = ${device.id} and geofence_id = ${geofenceId}
          and event_type = 'enter'`.execute(db);
        const enteredAt = latest.rows[0]?.occurred_at ?? device.last_evaluated_at;
        if (enteredAt === null || enteredAt === undefined) continue;
        const exists = await sql<{ id: string }>`select id from geofences where id = ${geofenceId}`.execute(
          db,
        );
        if (exists.rows.length === 0) continue;
        await sql`insert into geofence_presence (device_id, geofence_id, workspace_id, entered_at)
          values (${device.id}, ${geofenceId}, ${device.workspace_id}, ${enteredAt})`.execute(db);
      }
    }
  },
};
