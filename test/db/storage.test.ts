/**
 * The storage layer behaves the same on SQLite and PostgreSQL (run this file with either
 * TEST_DATABASE_URL): migrations, transactions, and the column representations the dialects differ in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { parseDatabaseUrl } from '../../src/config.ts';
import { fromJson, json, toBool, toDate } from '../../src/db/columns.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { isUniqueViolation } from '../../src/db/errors.ts';
import { concurrentCatalogChange, migrateToLatest } from '../../src/db/migrate.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { createTestDatabase, IS_POSTGRES, type TestDatabase } from '../helpers/database.ts';

/**
 * Kysely's introspection scans every schema of the database, so another test dropping its schema
 * mid-scan fails it (see `concurrentCatalogChange`); the scan is then simply run again.
 */
async function introspectTables(handle: DatabaseHandle) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await handle.db.introspection.getTables();
    } catch (error) {
      if (attempt >= 5 || !concurrentCatalogChange(error, handle.schema)) throw error;
    }
  }
}

describe(`storage on ${IS_POSTGRES ? 'PostgreSQL' : 'SQLite'}`, () => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  const now = new Date('2026-03-10T12:34:56.789Z');

  before(async () => {
    testDb = await createTestDatabase();
    const target = parseDatabaseUrl(testDb.url);
    assert.ok(target);
    handle = openDatabase(target, testDb.schema ? { schema: testDb.schema } : {});
  });
  after(async () => {
    await handle.close();
    await testDb.drop();
  });

  test('migrating an empty database applies every migration; migrating again applies none', async () => {
    const first = await migrateToLatest(handle);
    assert.deepEqual(
      first.applied,
      MIGRATIONS.map((m) => m.name),
    );
    const second = await migrateToLatest(handle);
    assert.deepEqual(second.applied, []);
  });

  test('both dialects expose the same tables and columns', async () => {
    const tables = (await introspectTables(handle)).filter((t) => t.schema === handle.schema);
    const names = tables
      .map((t) => t.name)
      .filter((n) => !n.startsWith('kysely_'))
      .sort();
    assert.deepEqual(names, [
      'account_settings',
      'api_keys',
      'auth_sessions',
      'device_last_locations',
      'device_tokens',
      'devices',
      'email_outbox',
      'event_outbox',
      'geofence_events',
      'geofence_presence',
      'geofence_versions',
      'geofences',
      'invitations',
      'invoices',
      'locations',
      'locations_staged',
      'notifications',
      'one_time_tokens',
      'quota_notifications',
      'subscriptions',
      'tracking_sessions',
      'usage_counters',
      'usage_daily',
      'users',
      'webhook_dead_letters',
      'webhook_deliveries',
      'webhook_delivery_attempts',
      'webhook_dlq_retry_jobs',
      'webhook_rate_windows',
      'webhooks',
      'workflow_action_attempts',
      'workflow_action_runs',
      'workflow_event_contexts',
      'workflow_runs',
      'workflows',
      'workspace_members',
      'workspaces',
    ]);
    const users = tables.find((t) => t.name === 'users');
    assert.deepEqual(users?.columns.map((c) => c.name).sort(), [
      'created_at',
      'email',
      'email_verified_at',
      'id',
      'name',
      'password_hash',
      'updated_at',
    ]);
  });

  test('timestamps, booleans and JSON round-trip to the same values', async () => {
    await handle.db
      .insertInto('users')
      .values({
        id: 'u1',
        email: 'u1@example.com',
        name: null,
        password_hash: 'x',
        email_verified_at: now,
        created_at: now,
        updated_at: now,
      })
      .execute();
    await handle.db
      .insertInto('account_settings')
      .values({
        user_id: 'u1',
        timezone: 'UTC',
        email_notifications: true,
        notify_on: json(['dlq', 'quota']),
        updated_at: now,
      })
      .execute();
    const user = await handle.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', 'u1')
      .executeTakeFirstOrThrow();
    assert.equal(toDate(user.created_at).toISOString(), now.toISOString());
    const settings = await handle.db
      .selectFrom('account_settings')
      .selectAll()
      .where('user_id', '=', 'u1')
      .executeTakeFirstOrThrow();
    assert.equal(toBool(settings.email_notifications), true);
    assert.deepEqual(fromJson(settings.notify_on), ['dlq', 'quota']);
    // Range comparisons on timestamps agree in both dialects.
    const later = await handle.db
      .selectFrom('users')
      .select('id')
      .where('created_at', '>', new Date(now.getTime() - 1))
      .execute();
    const earlier = await handle.db
      .selectFrom('users')
      .select('id')
      .where('created_at', '>', new Date(now.getTime() + 1))
      .execute();
    assert.deepEqual([later.length, earlier.length], [1, 0]);
  });

  test('a failing transaction leaves nothing behind', async () => {
    await assert.rejects(
      withTransaction(handle.db, async (trx) => {
        await trx
          .insertInto('workspaces')
          .values({
            id: 'w-rollback',
            name: 'gone',
            access_token_ttl_seconds: 60,
            created_at: now,
            updated_at: now,
          })
          .execute();
        throw new Error('abort');
      }),
      /abort/,
    );
    const row = await handle.db
      .selectFrom('workspaces')
      .select('id')
      .where('id', '=', 'w-rollback')
      .executeTakeFirst();
    assert.equal(row, undefined);
  });

  test('unique violations are recognised in both dialects', async () => {
    const error = await handle.db
      .insertInto('users')
      .values({
        id: 'u2',
        email: 'u1@example.com',
        name: null,
        password_hash: 'x',
        email_verified_at: null,
        created_at: now,
        updated_at: now,
      })
      .execute()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(isUniqueViolation(error), `expected a unique violation, got ${String(error)}`);
  });

  test('foreign keys cascade', async () => {
    await handle.db
      .insertInto('workspaces')
      .values({ id: 'w1', name: 'w', access_token_ttl_seconds: 60, created_at: now, updated_at: now })
      .execute();
    await handle.db
      .insertInto('workspace_members')
      .values({ workspace_id: 'w1', user_id: 'u1', role: 'owner', created_at: now })
      .execute();
    await handle.db.deleteFrom('workspaces').where('id', '=', 'w1').execute();
    const members = await handle.db
      .selectFrom('workspace_members')
      .select('user_id')
      .where('workspace_id', '=', 'w1')
      .execute();
    assert.equal(members.length, 0);
  });

  test('concurrent transactions are serialised without lost updates', async () => {
    await handle.db
      .insertInto('workspaces')
      .values({ id: 'w-count', name: '0', access_token_ttl_seconds: 0, created_at: now, updated_at: now })
      .execute();
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withTransaction(handle.db, async (trx) => {
          await trx
            .updateTable('workspaces')
            .set({ access_token_ttl_seconds: sql<number>`access_token_ttl_seconds + 1` })
            .where('id', '=', 'w-count')
            .execute();
        }),
      ),
    );
    const row = await handle.db
      .selectFrom('workspaces')
      .select('access_token_ttl_seconds')
      .where('id', '=', 'w-count')
      .executeTakeFirstOrThrow();
    assert.equal(row.access_token_ttl_seconds, 20);
  });

  test('ping reports reachability', async () => {
    assert.equal(await handle.ping(), true);
  });
});
