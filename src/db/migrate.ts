/**
 * Runs pending migrations (at start and via `cli migrate`). Kysely's Migrator takes a lock table so
 * several nodes starting at once migrate exactly once.
 */
import { type Kysely, type Migration as KyselyMigration, Migrator } from 'kysely';
import type { DatabaseHandle } from './database.ts';
import { MIGRATIONS } from './migrations/index.ts';

export interface MigrationReport {
  applied: string[];
}

export async function migrateToLatest(handle: DatabaseHandle): Promise<MigrationReport> {
  const db = handle.db as unknown as Kysely<unknown>;
  const migrations: Record<string, KyselyMigration> = {};
  for (const migration of MIGRATIONS) {
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
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
}
