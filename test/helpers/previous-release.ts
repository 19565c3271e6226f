/**
 * A test database as an earlier release left it: every migration up to and including `last`
 * (by name), then `fill` writes rows the way that release wrote them. Migration tests then start
 * the current app on it, which runs the migrations after `last`.
 */
import assert from 'node:assert/strict';
import { type Kysely, type Migration as KyselyMigration, Migrator } from 'kysely';
import { parseDatabaseUrl } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import type { TestDatabase } from './database.ts';

export async function migrateUpTo(
  database: TestDatabase,
  last: string,
  fill: (db: Kysely<unknown>) => Promise<void>,
): Promise<void> {
  const index = MIGRATIONS.findIndex((m) => m.name === last);
  assert.ok(index >= 0, `no migration named ${last}`);
  const target = parseDatabaseUrl(database.url);
  assert.ok(target);
  const handle = openDatabase(target, database.schema ? { schema: database.schema } : {});
  try {
    const migrations: Record<string, KyselyMigration> = {};
    for (const m of MIGRATIONS.slice(0, index + 1)) {
      migrations[m.name] = { up: (k) => m.up(k as Kysely<unknown>, handle.capabilities) };
    }
    const migrator = new Migrator({
      db: handle.db as unknown as Kysely<unknown>,
      provider: { getMigrations: async () => migrations },
      ...(handle.schema ? { migrationTableSchema: handle.schema } : {}),
    });
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
    await fill(handle.db as unknown as Kysely<unknown>);
  } finally {
    await handle.close();
  }
}
