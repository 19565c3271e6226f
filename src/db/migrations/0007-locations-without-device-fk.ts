import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/**
 * `locations.device_id` loses its foreign key (ADR 008, "Batch speed"). The key was checked on
 * every inserted location (a lookup in the devices' primary key per row, 1,000 per batch, on the
 * hottest insert) only to guarantee what ingestion already guarantees: it stores locations of
 * devices it has just locked. What the key was really used for, deleting a device's locations with
 * the device (and with its workspace, whose deletion cascades to devices), is now an `AFTER DELETE`
 * trigger on `devices`: deletion stays a database rule, however the device goes.
 *
 * PostgreSQL drops the constraint in place. SQLite cannot drop a column constraint, so the table is
 * rebuilt (same columns and indexes) and its rows copied: a one-time cost proportional to the
 * location history.
 */
export const locationsWithoutDeviceFk: Migration = {
  name: '0007_locations_without_device_fk',
  async up(db, { dialect, types: t }) {
    if (dialect === 'postgres') {
      await sql`alter table locations drop constraint if exists locations_device_id_fkey`.execute(db);
      await sql`
        create function delete_device_locations() returns trigger language plpgsql as $$
        begin
          delete from locations where device_id = old.id;
          return old;
        end
        $$`.execute(db);
      await sql`
        create trigger devices_delete_locations after delete on devices
        for each row execute function delete_device_locations()`.execute(db);
      return;
    }

    await db.schema
      .createTable('locations_rebuilt')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('device_id', 'text', (c) => c.notNull())
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
    await sql`
      insert into locations_rebuilt (id, workspace_id, device_id, session_id, lng, lat, accuracy, speed,
        heading, altitude, metadata, recorded_at, received_at, out_of_order)
      select id, workspace_id, device_id, session_id, lng, lat, accuracy, speed, heading, altitude,
        metadata, recorded_at, received_at, out_of_order
      from locations`.execute(db);
    await sql`drop table locations`.execute(db);
    await sql`alter table locations_rebuilt rename to locations`.execute(db);
    // The indexes of 0003, unchanged.
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
    await db.schema
      .createIndex('locations_session_recorded_idx')
      .on('locations')
      .columns(['session_id', 'recorded_at'])
      .where(sql.ref('session_id'), 'is not', null)
      .execute();
    // SQLite runs triggers for rows deleted by a foreign-key cascade too (workspace deletion).
    await sql`
      create trigger devices_delete_locations after delete on devices
      begin
        delete from locations where device_id = old.id;
      end`.execute(db);
  },
};
