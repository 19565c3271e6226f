/**
 * The interleaving a count limit must not allow (ADR 011), forced step by step on two connections
 * to one database, as two nodes have: A counts and has not yet committed its insert; B, creating in
 * the same workspace, must not count until A has committed. PostgreSQL: B waits on the workspace's
 * advisory lock, then counts A's row. SQLite: B cannot even begin (A's transaction holds the
 * database's write lock since BEGIN IMMEDIATE; with no busy timeout B fails at once instead of
 * waiting), and after A's commit it counts A's row. And within one process the creates of a
 * workspace's resource wait for each other in memory, before they take a connection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { admitCreates, type CountLimit } from '../../src/billing/count-limits.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { insertDevice, newDevice } from '../../src/devices/devices.repository.ts';
import { QuotaExceededError } from '../../src/shared/errors.ts';
import { uuidv7 } from '../../src/shared/ids.ts';
import type { TestApp } from '../helpers/app.ts';
import { createSharedTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { signUp, startIdentityApp } from '../helpers/identity.ts';

/** Resolves once some transaction waits for an advisory lock (PostgreSQL), or fails after 10 s. */
async function someoneWaitsForAdvisoryLock(handle: DatabaseHandle): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`.execute(handle.db);
    if ((rows[0]?.n ?? 0) > 0) return;
    if (Date.now() > deadline) assert.fail('the second transaction never waited for the lock');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('count limit lock: a second creator counts only after the first commits', () => {
  let shared: TestDatabase;
  let t: TestApp;
  let other: DatabaseHandle;

  before(async () => {
    shared = await createSharedTestDatabase();
    t = await startIdentityApp({ database: shared });
    other = openDatabase(t.deps.config.database, shared.schema ? { schema: shared.schema, poolSize: 2 } : {});
  });
  after(async () => {
    await other?.close();
    await t?.close();
    await shared?.drop();
  });

  test('the second creator sees the first one’s row and is refused at the limit', async () => {
    const { workspace } = await signUp(t, 'count-lock');
    const limit: CountLimit = { workspaceId: workspace.id, resource: 'devices', limit: 1, planName: 'Tiny' };
    const capabilities = t.deps.database.capabilities;
    const device = newDevice(
      uuidv7(),
      workspace.id,
      { name: 'first', externalId: null, userId: null, metadata: {} },
      t.clock.now(),
    );
    const second = () => withTransaction(other.db, (trx) => admitCreates(trx, capabilities, limit));

    if (capabilities.advisoryLocks) {
      let waiting: Promise<void> | undefined;
      let secondSettled = false;
      await withTransaction(t.deps.database.db, async (trx) => {
        await admitCreates(trx, capabilities, limit);
        waiting = second().finally(() => {
          secondSettled = true;
        });
        // Handled below, after A's commit; until then it must stay pending.
        waiting.catch(() => {});
        // B has read no count yet: it waits on the lock while A's insert is not committed.
        await someoneWaitsForAdvisoryLock(other);
        assert.equal(secondSettled, false, 'B went past the lock while A held it');
        await insertDevice(trx, device);
      });
      // After A's commit B counts A's device: refused.
      await assert.rejects(waiting as Promise<void>, (error: unknown) => {
        assert.ok(error instanceof QuotaExceededError);
        assert.deepEqual(error.details, { resource: 'devices', limit: 1, count: 1 });
        return true;
      });
    } else {
      await sql`PRAGMA busy_timeout = 0`.execute(other.db);
      await withTransaction(t.deps.database.db, async (trx) => {
        await admitCreates(trx, capabilities, limit);
        // B cannot begin while A, having counted, has not committed: no stale count is possible.
        await assert.rejects(second(), /database is locked/);
        await insertDevice(trx, device);
      });
      await assert.rejects(second(), (error: unknown) => {
        assert.ok(error instanceof QuotaExceededError);
        assert.deepEqual(error.details, { resource: 'devices', limit: 1, count: 1 });
        return true;
      });
    }
  });

  test('this process runs one create per workspace and resource at a time, before any connection', async () => {
    const { workspace } = await signUp(t, 'count-queue');
    const limiter = t.deps.billing.countLimit;
    let running = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const create = (limit: CountLimit | undefined) => {
      assert.equal(limit?.limit, 100, 'the free plan’s device limit');
      running += 1;
      most = Math.max(most, running);
      return new Promise<void>((resolve) =>
        releases.push(() => {
          running -= 1;
          resolve();
        }),
      );
    };
    const all = Promise.all(Array.from({ length: 5 }, () => limiter(workspace.id, 'devices', create)));
    // Another resource of the same workspace is not held up.
    let webhookRan = false;
    await limiter(workspace.id, 'webhooks', async () => {
      webhookRan = true;
    });
    assert.ok(webhookRan);
    for (let i = 0; i < 5; i++) {
      while (releases.length === 0) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(running, 1);
      (releases.shift() as () => void)();
    }
    await all;
    assert.equal(most, 1, 'never two creates of the workspace’s devices at once');
  });
});
