/**
 * Several workers on one database (like several nodes): they claim disjoint deliveries (SKIP
 * LOCKED and leases on PostgreSQL, the single writer on SQLite), so no attempt is ever sent twice,
 * and one webhook's rate limit holds for all of them together.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createDeliveryDispatcher, createDeliveryWorker, drainOutbox } from '../../src/engine.ts';
import type { DeliveryWorker } from '../../src/webhooks/delivery-worker.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createSharedTestDatabase, IS_POSTGRES } from '../helpers/database.ts';
import {
  createWebhook,
  type DeliveryHarness,
  maxPerWindow,
  produceEvents,
  Receiver,
  startDeliveryHarness,
} from './delivery-helpers.ts';

describe('two workers on one database', () => {
  let h: DeliveryHarness;
  let second: TestApp;
  let workers: DeliveryWorker[];
  let receiver: Receiver;
  const dispatchers: Array<{ close(): Promise<void> }> = [];

  before(async () => {
    const database = await createSharedTestDatabase();
    h = await startDeliveryHarness({ database });
    // A second node: its own connection pool and worker, the same database and clock. On SQLite
    // both workers share the first app's connection: two connections of one process would block
    // each other's synchronous BEGIN IMMEDIATE (separate processes wait on the busy timeout).
    second = await startTestApp({ database, clock: h.t.clock });
    const secondDeps = IS_POSTGRES ? second.deps : h.t.deps;
    const d1 = createDeliveryDispatcher(h.t.deps);
    const d2 = createDeliveryDispatcher(secondDeps);
    dispatchers.push(d1, d2);
    workers = [
      createDeliveryWorker(h.t.deps, d1, { batchSize: 15 }),
      createDeliveryWorker(secondDeps, d2, { batchSize: 15 }),
    ];
    receiver = await Receiver.start(
      () => h.t.clock.now().getTime(),
      () => ({ delayMs: 2 }),
    );
  });
  after(async () => {
    for (const w of workers) await w.stop();
    for (const d of dispatchers) await d.close();
    await second.close();
    await h.close();
    await h.t.database.drop();
    await receiver.close();
  });

  test('300 deliveries claimed concurrently: each sent exactly once', async () => {
    for (const name of ['a', 'b', 'c'])
      await createWebhook(h, { url: receiver.url, name, rate_limit_per_minute: 10000 });
    await produceEvents(h, 100);
    assert.equal((await drainOutbox(h.t.deps)).deliveries, 300);
    const sentBy = [0, 0];
    for (let round = 0; round < 200 && receiver.requests.length < 300; round++) {
      const counts = await Promise.all(workers.map((w) => w.runOnce()));
      counts.forEach((n, i) => {
        sentBy[i] = (sentBy[i] ?? 0) + n;
      });
    }
    assert.equal(receiver.requests.length, 300);
    const keys = receiver.requests.map(
      (r) => `${r.headers['x-idempotency-key']}#${r.headers['x-svc-attempt']}`,
    );
    assert.equal(new Set(keys).size, 300, 'no attempt sent twice');
    assert.ok((sentBy[0] ?? 0) > 0 && (sentBy[1] ?? 0) > 0, `both workers worked: ${sentBy.join(' / ')}`);
    const doubled = await sql<{ n: number }>`select count(*) as n from (
        select delivery_id from webhook_delivery_attempts group by delivery_id having count(*) > 1) as d`.execute(
      h.t.deps.database.db,
    );
    assert.equal(Number(doubled.rows[0]?.n), 0);
    const pending = await sql<{
      n: number;
    }>`select count(*) as n from webhook_deliveries where status <> 'success'`.execute(h.t.deps.database.db);
    assert.equal(Number(pending.rows[0]?.n), 0);
  });

  test('one webhook limited to 30/min stays within it across both workers', async () => {
    const before = receiver.requests.length;
    await createWebhook(h, {
      url: receiver.url,
      name: 'limited',
      rate_limit_per_minute: 30,
      events: ['geofence.enter'],
    });
    // The other three webhooks get these events too; only the limited one's requests are checked.
    await produceEvents(h, 160);
    await drainOutbox(h.t.deps);
    for (let round = 0; round < 1000 && receiver.requests.length < before + 80 + 3 * 160; round++) {
      await Promise.all(workers.map((w) => w.runOnce()));
      h.t.clock.advance(900);
    }
    // Per-webhook timing comes from the delivery records: join requests to their webhook.
    const rows = await sql<{ idempotency_key: string; name: string }>`select d.idempotency_key, w.name
        from webhook_deliveries d join webhooks w on w.id = d.webhook_id`.execute(h.t.deps.database.db);
    const hookOf = new Map(rows.rows.map((r) => [r.idempotency_key, r.name]));
    const limitedTimes = receiver.requests
      .slice(before)
      .filter((r) => hookOf.get(String(r.headers['x-idempotency-key'])) === 'limited')
      .map((r) => r.clockMs);
    assert.equal(limitedTimes.length, 80, 'all 80 enter events reached the limited webhook');
    assert.equal(maxPerWindow(limitedTimes), 30);
  });
});
