/**
 * A test database as an earlier release left it: every migration up to and including `last`
 * (by name), then `fill` writes rows the way that release wrote them. Migration tests then start
 * the current app on it, which runs the migrations after `last`.
 */
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import { parseDatabaseUrl } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
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
    // The app's own migration runner, so a concurrent test's schema drop is retried alike.
    await migrateToLatest(handle, MIGRATIONS.slice(0, index + 1));
    await fill(handle.db as unknown as Kysely<unknown>);
  } finally {
    await handle.close();
  }
}
