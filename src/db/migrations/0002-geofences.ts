import type { Migration } from './migration.ts';

/**
 * Geofences (contract §3) and the per-workspace change counter that keeps every node's in-memory
 * index in step with the database (docs/decisions/007-geofence-index-consistency.md).
 */
export const geofences: Migration = {
  name: '0002_geofences',
  async up(db, { types: t }) {
    await db.schema
      .createTable('geofences')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('external_id', 'text')
      // The normalised geometry returned by validateGeometry (altitude dropped, repeats removed).
      .addColumn('geometry', t.json, (c) => c.notNull())
      .addColumn('metadata', t.json, (c) => c.notNull())
      .addColumn('enabled', t.boolean, (c) => c.notNull())
      .addColumn('bbox', t.json, (c) => c.notNull())
      .addColumn('vertex_count', 'integer', (c) => c.notNull())
      // Row version: 1 at creation, +1 on every update.
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('created_at', t.timestamp, (c) => c.notNull())
      .addColumn('updated_at', t.timestamp, (c) => c.notNull())
      .execute();
    // Both dialects treat NULLs as distinct in a unique index, so any number of geofences may
    // have no external_id.
    await db.schema
      .createIndex('geofences_external_id_uq')
      .on('geofences')
      .columns(['workspace_id', 'external_id'])
      .unique()
      .execute();
    await db.schema
      .createIndex('geofences_workspace_created_idx')
      .on('geofences')
      .columns(['workspace_id', 'created_at'])
      .execute();

    // One row per workspace, bumped in the transaction of every write that changes the set of
    // enabled geofences or their geometry; nodes compare it with the version their index holds.
    await db.schema
      .createTable('geofence_versions')
      .addColumn('workspace_id', 'text', (c) =>
        c.primaryKey().references('workspaces.id').onDelete('cascade'),
      )
      .addColumn('version', 'bigint', (c) => c.notNull())
      .execute();
  },
};
