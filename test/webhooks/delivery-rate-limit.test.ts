/**
 * Per-webhook `rate_limit_per_minute` (seed §6.4, contract §5): 200 events to a webhook limited to
 * 60/min never produce more than 60 requests in any 60-second window of the injected clock, use no
 * attempt while deferred (every request is attempt 1), and arrive in event order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drainOutbox } from '../../src/engine.ts';
import {
  createWebhook,
  type DeliveryHarness,
  listDeliveries,
  maxPerWindow,
  produceEvents,
  Receiver,
  startDeliveryHarness,
  stepOf,
} from './delivery-helpers.ts';

describe('per-webhook rate limit', () => {
  let h: DeliveryHarness;
  let receiver: Receiver;

  before(async () => {
    h = await startDeliveryHarness();
    receiver = await Receiver.start(() => h.t.clock.now().getTime());
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  test('200 events at 60/min: ≤ 60 in any 60 s, all delivered, in order, no attempt used', async () => {
    const hook = await createWebhook(h, { url: receiver.url, rate_limit_per_minute: 60 });
    await produceEvents(h, 200);
    assert.equal((await drainOutbox(h.t.deps)).deliveries, 200);
    const start = h.t.clock.now().getTime();
    // Rounds every 700 ms of clock (not a divisor of a second, so windows are hit at all phases).
    for (let round = 0; round < 2000 && receiver.requests.length < 200; round++) {
      await h.worker.runOnce();
      h.t.clock.advance(700);
    }
    assert.equal(receiver.requests.length, 200, 'all 200 delivered');
    assert.equal(maxPerWindow(receiver.requests.map((r) => r.clockMs)), 60);
    assert.deepEqual(
      receiver.requests.map(stepOf),
      Array.from({ length: 200 }, (_v, i) => i),
      'in event order',
    );
    assert.ok(
      receiver.requests.every((r) => r.headers['x-svc-attempt'] === '1'),
      'deferral is not an attempt',
    );
    const elapsed = (receiver.requests.at(-1)?.clockMs ?? 0) - start;
    // 200 at 60/min needs a bit over three minutes, and not much more.
    assert.ok(elapsed >= 3 * 60_000 && elapsed < 4 * 60_000, `took ${elapsed} ms of clock`);
    const list = await listDeliveries(h, hook.id, { status: 'success' });
    assert.equal(list.pagination.total, 200);
    assert.ok(list.results.every((d) => d.attempt_count === 1));
  });
});
