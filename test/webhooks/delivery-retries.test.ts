/**
 * Retrying by hand (ADR 018), with a manual clock and a two-attempt schedule (`1m`): "retry now" of
 * a delivery — a waiting pending one becomes due at once (same id, the worker woken), a failed one
 * is retried through its dead-letter entry (a new id), a success or an attempt in flight is a 409 —
 * the dead-letter list's filters, and the bulk retry of mixed ids with its 422s.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { sql } from 'kysely';
import { call, expectError, expectStatus, signUp } from '../helpers/identity.ts';
import {
  createWebhook,
  type DeadLetterOut,
  type DeliveryHarness,
  deliverDue,
  eventSource,
  getDelivery,
  Receiver,
  sendTest,
  startDeliveryHarness,
} from './delivery-helpers.ts';

const MIN = 60_000;

interface BulkOut {
  retried: Array<{ dlq_id: string; delivery_id: string }>;
  failed: Array<{ dlq_id: string; error_code: string; detail: string }>;
}

describe('retry now, dead-letter filters and bulk retry', () => {
  let h: DeliveryHarness;
  let receiver: Receiver;
  /** Answers per webhook path: `/ok` 200, anything else 500. */
  const failingUrl = () => `${receiver.url}/fail`;
  const okUrl = () => `${receiver.url}/ok`;

  before(async () => {
    h = await startDeliveryHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '1m' } });
    receiver = await Receiver.start(() => h.t.clock.now().getTime());
    receiver.respond = (r) => ({ status: r.url.endsWith('/ok') ? 200 : 500 });
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  const retryNow = (id: string) =>
    call(h.t, `/webhooks/deliveries/${id}/retry`, { token: h.token, method: 'POST' });

  async function deadLetters(query: Record<string, string> = {}): Promise<DeadLetterOut[]> {
    const res = await call(h.t, '/webhooks/dlq', { token: h.token, query: { limit: '200', ...query } });
    return expectStatus<{ results: DeadLetterOut[] }>(res, 200, 'dlq').results;
  }

  /** Runs the worker, a minute apart, until `done()` (both attempts of a failing delivery: twice). */
  async function runUntil(done: () => Promise<boolean>): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await deliverDue(h);
      if (await done()) return;
      h.t.clock.advance(MIN);
    }
    assert.fail('not settled after three rounds');
  }

  /** A test delivery to `webhookId` that fails both attempts: its dead-letter entry. */
  async function deadLettered(webhookId: string): Promise<DeadLetterOut> {
    const id = await sendTest(h, webhookId);
    await runUntil(async () => (await getDelivery(h, id)).status === 'failed');
    const record = await getDelivery(h, id);
    assert.equal(record.attempt_count, 2, 'both attempts made');
    const entry = (await deadLetters()).find((e) => e.delivery_id === id);
    assert.ok(entry, 'dead-lettered');
    return entry;
  }

  // Each test starts without webhooks (the Free plan allows five): deleting them also ends the
  // previous test's pending deliveries (failed as orphans at the next claim, no dead letter).
  beforeEach(async () => {
    const res = await call(h.t, '/webhooks', { token: h.token, query: { limit: '200' } });
    for (const w of expectStatus<{ results: Array<{ id: string }> }>(res, 200).results) {
      expectStatus(await call(h.t, `/webhooks/${w.id}`, { token: h.token, method: 'DELETE' }), 204);
    }
    await deliverDue(h);
  });

  test('a pending delivery waiting for its retry becomes due now: same id, next_retry_at = now', async () => {
    const hook = await createWebhook(h, { url: failingUrl() });
    const id = await sendTest(h, hook.id);
    assert.equal(await deliverDue(h), 1);
    const waiting = await getDelivery(h, id);
    assert.equal(waiting.status, 'pending');
    assert.equal(waiting.next_retry_at, new Date(h.t.clock.now().getTime() + MIN).toISOString());
    h.t.clock.advance(10_000);
    assert.equal(await h.worker.runOnce(), 0, 'not due yet');

    let woken = 0;
    const unsubscribe = h.t.deps.signals.deliveries.subscribe(() => {
      woken += 1;
    });
    const accepted = expectStatus(await retryNow(id), 202, 'retry now');
    unsubscribe();
    assert.deepEqual(accepted, { delivery_id: id, status: 'pending' });
    assert.equal(woken, 1, 'the worker is woken, as for a new delivery');
    const due = await getDelivery(h, id);
    assert.equal(due.next_retry_at, h.t.clock.now().toISOString());
    assert.equal(due.attempt_count, 1, 'the attempt counter goes on');

    await sql`update webhooks set url = ${okUrl()} where id = ${hook.id}`.execute(h.t.deps.database.db);
    const before = receiver.requests.length;
    assert.equal(await h.worker.runOnce(), 1, 'attempted at once');
    assert.equal(receiver.requests[before]?.headers['x-svc-attempt'], '2');
    const done = await getDelivery(h, id);
    assert.equal(done.status, 'success');
    assert.equal(done.attempts.length, 2);

    const again = expectError(await retryNow(id), 409, 'CONFLICT', 'a success');
    assert.equal(again.detail, 'Delivery already succeeded; there is nothing to retry');
  });

  test('an attempt in flight (a lease held) is a 409; once the lease ran out it is due now', async () => {
    const hook = await createWebhook(h, { url: failingUrl() });
    const id = await sendTest(h, hook.id);
    const now = h.t.clock.now();
    // What a claim writes: a worker's lease until 30 s from now.
    await sql`update webhook_deliveries set lease_owner = ${'worker-elsewhere'}, due_at = ${new Date(now.getTime() + 30_000)}
      where id = ${id}`.execute(h.t.deps.database.db);
    const busy = expectError(await retryNow(id), 409, 'CONFLICT', 'in flight');
    assert.match(String(busy.detail), /being attempted right now/);
    h.t.clock.advance(30_000);
    expectStatus(await retryNow(id), 202, 'lease ran out: the worker is gone');
    assert.equal((await getDelivery(h, id)).next_retry_at, h.t.clock.now().toISOString());
    assert.equal(await h.worker.runOnce(), 1);
  });

  test('a failed delivery is retried through its dead-letter entry: a new delivery, the entry requeued', async () => {
    const hook = await createWebhook(h, { url: failingUrl() });
    const entry = await deadLettered(hook.id);
    const original = await getDelivery(h, entry.delivery_id);
    const accepted = expectStatus<{ delivery_id: string; status: string }>(
      await retryNow(entry.delivery_id),
      202,
      'retry a failed delivery',
    );
    assert.notEqual(accepted.delivery_id, entry.delivery_id);
    assert.equal(accepted.status, 'pending');
    const fresh = await getDelivery(h, accepted.delivery_id);
    assert.equal(fresh.status, 'pending');
    assert.equal(fresh.attempt_count, 0);
    assert.equal(fresh.idempotency_key, original.idempotency_key);
    assert.equal(fresh.request_body, original.request_body);
    const requeued = (await deadLetters()).find((e) => e.dlq_id === entry.dlq_id);
    assert.equal(requeued?.requeued, true);
    // As POST /webhooks/dlq/{dlq_id}/retry does for a requeued entry: one more new delivery.
    const second = expectStatus<{ delivery_id: string }>(await retryNow(entry.delivery_id), 202);
    assert.ok(![entry.delivery_id, accepted.delivery_id].includes(second.delivery_id));
    assert.equal(await deliverDue(h), 2, 'both retries are sent');
  });

  test('404 for an unknown delivery, another workspace’s, or a failed one whose webhook was deleted', async () => {
    expectError(await retryNow(crypto.randomUUID()), 404, 'NOT_FOUND');
    const other = await signUp(h.t, 'other-retry');
    const theirHook = expectStatus<{ id: string }>(
      await call(h.t, '/webhooks', { token: other.tokens.access_token, body: { name: 'x', url: okUrl() } }),
      201,
    );
    const theirs = expectStatus<{ delivery_id: string }>(
      await call(h.t, `/webhooks/${theirHook.id}/test`, { token: other.tokens.access_token, method: 'POST' }),
      202,
    ).delivery_id;
    const body = expectError(await retryNow(theirs), 404, 'NOT_FOUND');
    assert.equal(body.detail, 'Delivery not found');

    const hook = await createWebhook(h, { url: failingUrl() });
    const entry = await deadLettered(hook.id);
    expectStatus(await call(h.t, `/webhooks/${hook.id}`, { token: h.token, method: 'DELETE' }), 204);
    assert.equal(
      expectError(await retryNow(entry.delivery_id), 404, 'NOT_FOUND').detail,
      'Webhook not found',
    );
  });

  test('the dead-letter list filters by webhook, event type and a queued_at range, with requeued', async () => {
    const a = await createWebhook(h, { url: failingUrl(), name: 'a', events: ['geofence.exit'] });
    const b = await createWebhook(h, { url: failingUrl(), name: 'b', events: ['geofence.enter'] });
    // After the entries of earlier tests, which may share the clock's current millisecond.
    h.t.clock.advance(1);
    const t0 = h.t.clock.now().getTime();
    const a1 = await deadLettered(a.id);
    const b1 = await deadLettered(b.id);
    const source = await eventSource(h);
    await source.step(true);
    assert.equal(
      await deliverDue(h),
      1,
      "the enter event, to b only (a's subscription has no geofence.enter)",
    );
    h.t.clock.advance(MIN);
    assert.equal(await h.worker.runOnce(), 1);
    const b2 = (await deadLetters({ event_type: 'geofence.enter' })).find((e) => e.webhook.id === b.id);
    assert.ok(b2);
    const ids = (list: DeadLetterOut[]) => list.map((e) => e.dlq_id);
    assert.deepEqual(ids(await deadLetters({ webhook_id: a.id })), [a1.dlq_id]);
    assert.deepEqual(ids(await deadLetters({ webhook_id: b.id })), [b2.dlq_id, b1.dlq_id]);
    assert.deepEqual(ids(await deadLetters({ webhook_id: b.id, event_type: 'webhook.test' })), [b1.dlq_id]);
    assert.deepEqual(ids(await deadLetters({ webhook_id: b.id, from: b2.queued_at, to: b2.queued_at })), [
      b2.dlq_id,
    ]);
    assert.deepEqual(
      ids(await deadLetters({ from: new Date(t0).toISOString(), to: a1.queued_at })),
      [a1.dlq_id],
      'inclusive on both ends',
    );
    expectStatus(await retryNow(b1.delivery_id), 202);
    assert.deepEqual(ids(await deadLetters({ webhook_id: b.id, requeued: 'true' })), [b1.dlq_id]);
    assert.deepEqual(ids(await deadLetters({ webhook_id: b.id, requeued: 'false' })), [b2.dlq_id]);
  });

  test('bulk retry: each id as the single retry would handle it, reported per id in request order', async () => {
    const hook = await createWebhook(h, { url: failingUrl() });
    const [e1, e2, e3] = [
      await deadLettered(hook.id),
      await deadLettered(hook.id),
      await deadLettered(hook.id),
    ];
    assert.ok(e1 && e2 && e3);
    expectStatus(
      await call(h.t, `/webhooks/dlq/${e3.dlq_id}/retry`, { token: h.token, method: 'POST' }),
      202,
      'e3 was requeued before',
    );
    // Another workspace's entry, an unknown id, and an entry whose webhook was deleted.
    const other = await signUp(h.t, 'other-bulk');
    const theirHook = expectStatus<{ id: string }>(
      await call(h.t, '/webhooks', {
        token: other.tokens.access_token,
        body: { name: 'x', url: failingUrl() },
      }),
      201,
    );
    expectStatus(
      await call(h.t, `/webhooks/${theirHook.id}/test`, { token: other.tokens.access_token, method: 'POST' }),
      202,
    );
    const theirEntries = async () =>
      expectStatus<{ results: DeadLetterOut[] }>(
        await call(h.t, '/webhooks/dlq', { token: other.tokens.access_token }),
        200,
      ).results;
    await runUntil(async () => (await theirEntries()).length > 0);
    const theirs = (await theirEntries())[0];
    assert.ok(theirs, 'their entry');
    const gone = await createWebhook(h, { url: failingUrl(), name: 'gone' });
    const orphan = await deadLettered(gone.id);
    expectStatus(await call(h.t, `/webhooks/${gone.id}`, { token: h.token, method: 'DELETE' }), 204);
    const unknown = crypto.randomUUID();
    const foreign = theirs.dlq_id;

    let woken = 0;
    const unsubscribe = h.t.deps.signals.deliveries.subscribe(() => {
      woken += 1;
    });
    const res = await call(h.t, '/webhooks/dlq/retry', {
      token: h.token,
      body: { dlq_ids: [e1.dlq_id, unknown, e3.dlq_id, foreign, orphan.dlq_id, e2.dlq_id] },
    });
    unsubscribe();
    const out = expectStatus<BulkOut>(res, 202, 'bulk retry');
    assert.deepEqual(
      out.retried.map((r) => r.dlq_id),
      [e1.dlq_id, e3.dlq_id, e2.dlq_id],
    );
    assert.deepEqual(out.failed, [
      { dlq_id: unknown, error_code: 'NOT_FOUND', detail: 'Dead-letter entry not found' },
      { dlq_id: foreign, error_code: 'NOT_FOUND', detail: 'Dead-letter entry not found' },
      { dlq_id: orphan.dlq_id, error_code: 'NOT_FOUND', detail: 'Webhook not found' },
    ]);
    assert.equal(woken, 1, 'the worker is woken once');
    for (const r of out.retried) {
      const fresh = await getDelivery(h, r.delivery_id);
      assert.equal(fresh.status, 'pending');
      assert.equal(fresh.attempt_count, 0);
    }
    const retried = new Set([e1.dlq_id, e2.dlq_id, e3.dlq_id]);
    const after = (await deadLetters({ webhook_id: hook.id })).filter((e) => retried.has(e.dlq_id));
    assert.deepEqual(
      after.map((e) => e.requeued),
      [true, true, true],
    );
    const orphanAfter = (await deadLetters()).find((e) => e.dlq_id === orphan.dlq_id);
    assert.equal(orphanAfter?.requeued, false, 'a refused entry is left as it was');
    const theirsAfter = expectStatus<{ results: DeadLetterOut[] }>(
      await call(h.t, '/webhooks/dlq', { token: other.tokens.access_token }),
      200,
    ).results;
    assert.deepEqual(
      theirsAfter.map((e) => [e.dlq_id, e.requeued]),
      [[theirs.dlq_id, false]],
      "the other workspace's entry is untouched",
    );
    await deliverDue(h);
    for (const r of out.retried) {
      assert.equal((await getDelivery(h, r.delivery_id)).attempt_count, 1, 'each new delivery is sent');
    }
  });

  test('a bulk body outside 1..100 distinct ids is a 422 in the contract’s shape', async () => {
    const bulk = (body: unknown) => call(h.t, '/webhooks/dlq/retry', { token: h.token, body });
    const issue = async (body: unknown) => {
      const detail = expectError(await bulk(body), 422, 'VALIDATION_ERROR', JSON.stringify(body).slice(0, 80))
        .detail as Array<{ type: string; loc: Array<string | number> }>;
      return detail.map((d) => [d.type, d.loc]);
    };
    assert.deepEqual(await issue({}), [['missing', ['body', 'dlq_ids']]]);
    assert.deepEqual(await issue({ dlq_ids: [] }), [['too_short', ['body', 'dlq_ids']]]);
    const many = Array.from({ length: 101 }, () => crypto.randomUUID());
    assert.deepEqual(await issue({ dlq_ids: many }), [['too_long', ['body', 'dlq_ids']]]);
    const id = crypto.randomUUID();
    assert.deepEqual(await issue({ dlq_ids: [id, id] }), [['value_error', ['body', 'dlq_ids']]]);
    assert.deepEqual(await issue({ dlq_ids: [id], all: true }), [['extra_forbidden', ['body', 'all']]]);
    assert.deepEqual(await issue({ dlq_ids: [1] }), [['string_type', ['body', 'dlq_ids', 0]]]);
    // 100 distinct unknown ids are accepted, each reported.
    const hundred = expectStatus<BulkOut>(await bulk({ dlq_ids: many.slice(0, 100) }), 202);
    assert.equal(hundred.failed.length, 100);
    assert.equal(hundred.retried.length, 0);
  });
});
