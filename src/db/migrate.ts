/**
 * Runs pending migrations (at start and via `cli migrate`). Kysely's Migrator takes a lock table so
 * several nodes starting at once migrate exactly once.
 */
import { type Kysely, type Migration as KyselyMigration, Migrator } from 'kysely';
import type { DatabaseHandle } from './database.ts';
import { MIGRATIONS } from './migrations/index.ts';
import type { Migration } from './migrations/migration.ts';

export interface MigrationReport {
  applied: string[];
}

/**
 * Applies every migration of `list` not yet applied. `list` is all of them except in migration
 * tests, which stop at an earlier release's last migration.
 */
export async function migrateToLatest(
  handle: DatabaseHandle,
  list: readonly Migration[] = MIGRATIONS,
): Promise<MigrationReport> {
  const db = handle.db as unknown as Kysely<unknown>;
  const migrations: Record<string, KyselyMigration> = {};
  for (const migration of list) {
    migrations[migration.name] = {
      up: (kysely) => migration.up(kysely as Kysely<unknown>, handle.capabilities),
    };
  }
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Kysely looks for its bookkeeping tables in every schema unless told which one is ours.
    ...(handle.schema ? { migrationTableSchema: handle.schema } : {}),
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) {
      return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
    }
    if (attempt < 5 && concurrentCatalogChange(error, handle.schema)) continue;
    throw error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Kysely's migrator checks for its bookkeeping tables by introspecting every schema of the
 * database, calling `has_schema_privilege` and `pg_get_serial_sequence` on each; a schema or table
 * that another session drops during that scan makes the query fail ("schema … does not exist",
 * "relation … does not exist", or from `pg_get_serial_sequence` "column … of relation … does not
 * exist"). That is someone else's object (ours is in use), so the check is
 * simply run again. Seen when test runs drop their schemas while others start.
 */
export function concurrentCatalogChange(error: unknown, ourSchema: string | undefined): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== '3F000' && code !== '42P01' && code !== '42703') return false;
  return ourSchema === undefined || !String((error as Error).message).includes(`"${ourSchema}"`);
}
