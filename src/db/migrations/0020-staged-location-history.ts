import { sql } from 'kysely';
import type { Migration } from './migration.ts';

/**
 * The staged history layout (ADR 008):
 * - `locations_staged`: groups of single POSTs append here, in arrival order, with no per-device
 *   index (its only key is the arrival sequence), so a commit writes the few pages at the table's
 *   end instead of a leaf of the per-device index per location. The merge (src/locations/history-merge.ts) moves
 *   rows into `locations` in device order every few seconds. Nothing to move: it starts empty.
 * - `device_last_locations`: each device's newest in-order location, one narrow row per device,
 *   written by the ingestion that applied it: what evaluation, `last_location` and `last_seen_at`
 *   read, now that the newest row may still be staged. Filled here from today's newest rows.
 *
 * Deleting a device deletes its merged locations and its newest-location row (the trigger of
 * 0007, extended); its staged rows are dropped by the merge, which keeps only rows whose device
 * exists (a scan of the staged table per deleted device would make deleting a workspace of many
 * devices quadratic).
 */
export const stagedLocationHistory: Migration = {
  name: '0020_staged_location_history',
  async up(db, { dialect, types: t }) {
    const postgres = dialect === 'postgres';
    await db.schema
      .createTable('locations_staged')
      .addColumn('seq', postgres ? 'bigint' : 'integer', (c) =>
        postgres ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey(),
      )
      .addColumn('id', 'text', (c) => c.notNull())
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

    const narrow = db.schema
      .createTable('device_last_locations')
      .addColumn('device_id', 'text', (c) => c.primaryKey())
      .addColumn('location_id', 'text', (c) => c.notNull())
      .addColumn('lng', t.double, (c) => c.notNull())
      .addColumn('lat', t.double, (c) => c.notNull())
      .addColumn('accuracy', t.double)
      .addColumn('recorded_at', t.timestamp, (c) => c.notNull())
      .addColumn('received_at', t.timestamp, (c) => c.notNull());
    // SQLite: one b-tree keyed by device instead of a rowid table plus a key index.
    await (postgres ? narrow : narrow.modifyEnd(sql`without rowid`)).execute();

    if (postgres) {
      // Rows live for seconds: vacuum after a few thousand deletions, not a fraction of the table.
      await sql`alter table locations_staged set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000)`.execute(
        db,
      );
      // Rewritten on every in-order location of its device: room on the page keeps it a HOT update.
      await sql`alter table device_last_locations set (fillfactor = 70)`.execute(db);
      await sql`
        insert into device_last_locations (device_id, location_id, lng, lat, accuracy, recorded_at, received_at)
        select d.id, n.id, n.lng, n.lat, n.accuracy, n.recorded_at, n.received_at
        from devices d
        cross join lateral (
          select id, lng, lat, accuracy, recorded_at, received_at from locations
          where device_id = d.id order by recorded_at desc, id desc limit 1
        ) n`.execute(db);
      await sql`
        create or replace function delete_device_locations() returns trigger language plpgsql as $$
        begin
          delete from locations where device_id = old.id;
          delete from device_last_locations where device_id = old.id;
          return old;
        end
        $$`.execute(db);
      return;
    }

    // The newest of equal times is the last applied: the larger rowid (ADR 008 before this layout).
    await sql`
      insert into device_last_locations (device_id, location_id, lng, lat, accuracy, recorded_at, received_at)
      select d.id, n.id, n.lng, n.lat, n.accuracy, n.recorded_at, n.received_at
      from devices d
      join locations n on n.rowid = (
        select rowid from locations where device_id = d.id order by recorded_at desc, rowid desc limit 1
      )`.execute(db);
    await sql`drop trigger devices_delete_locations`.execute(db);
    await sql`
      create trigger devices_delete_locations after delete on devices
      begin
        delete from locations where device_id = old.id;
        delete from device_last_locations where device_id = old.id;
      end`.execute(db);
  },
};
