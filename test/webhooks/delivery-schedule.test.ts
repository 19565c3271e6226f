/**
 * The retry schedule of seed §3 / §6.4 with an injected clock and real failures at a loopback
 * receiver: attempts at exactly the documented offsets (15m, 45m, 1h45m, 5h45m, 9h45m, 13h45m),
 * `X-SVC-Attempt` 1..7 with one idempotency key, `pending` with `next_retry_at` between attempts,
 * HTTP errors, timeouts and refused connections all counted, `failed` + a dead-letter entry (and
 * an admin notification) after the 7th; then a dead-letter retry is a fresh delivery whose first
 * attempt succeeds, and the statistics follow.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { call, expectError, expectStatus, signUp } from '../helpers/identity.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import {
  createWebhook,
  type DeadLetterOut,
  type DeliveryHarness,
  deliverDue,
  eventSource,
  getDelivery,
  listDeliveries,
  Receiver,
  startDeliveryHarness,
} from './delivery-helpers.ts';

const MIN = 60_000;
/** Seed §6.4: total time elapsed at attempts 1..7. */
const OFFSETS = [0, 15, 45, 105, 345, 585, 825].map((m) => m * MIN);

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('retry schedule and dead letters', () => {
  let h: DeliveryHarness;
  let receiver: Receiver;
  let sink: SmtpSink;

  before(async () => {
    sink = await startSmtpSink();
    h = await startDeliveryHarness({ env: { SMTP_URL: sink.url, PUBLIC_URL: 'https://geo.example.test' } });
    receiver = await Receiver.start(() => h.t.clock.now().getTime());
    expectStatus(
      await call(h.t, '/account/settings', {
        method: 'PATCH',
        token: h.token,
        body: { email_notifications: true },
      }),
      200,
    );
  });
  after(async () => {
    await h.close();
    await receiver.close();
    await sink.close();
  });

  test('seven attempts at the documented offsets, then failed and dead-lettered; a retry succeeds', async () => {
    const hook = await createWebhook(h, { url: receiver.url, name: 'flaky', timeout_seconds: 1 });
    const source = await eventSource(h);
    const deadUrl = `http://127.0.0.1:${await closedPort()}/hook`;
    // Attempt 1: 500; 2: a timeout (answers after 1.5 s, the webhook's timeout is 1 s); 3: the
    // connection is dropped; 4: connection refused (url switched to a closed port); 5–7: 503.
    receiver.respond = (_req, index) => {
      if (index === 1) return { status: 200, delayMs: 1500 };
      if (index === 2) return { destroy: true };
      return { status: index === 0 ? 500 : 503, body: 'down for maintenance' };
    };
    const start = h.t.clock.now().getTime();
    await source.step(true);
    assert.equal(await deliverDue(h), 1);
    const [delivery] = (await listDeliveries(h, hook.id)).results;
    assert.ok(delivery);

    for (let n = 2; n <= 7; n++) {
      const due = start + (OFFSETS[n - 1] ?? 0);
      const record = await getDelivery(h, delivery.id);
      assert.equal(record.status, 'pending', `pending before attempt ${n}`);
      assert.equal(record.attempt_count, n - 1);
      assert.equal(record.next_retry_at, new Date(due).toISOString(), `attempt ${n} scheduled at its offset`);
      assert.ok(record.error_message, 'the last failure is shown');
      h.t.clock.set(due - 1);
      assert.equal(await h.worker.runOnce(), 0, `attempt ${n} not made a millisecond early`);
      h.t.clock.set(due);
      if (n === 4)
        await sql`update webhooks set url = ${deadUrl} where id = ${hook.id}`.execute(h.t.deps.database.db);
      if (n === 5)
        await sql`update webhooks set url = ${receiver.url} where id = ${hook.id}`.execute(
          h.t.deps.database.db,
        );
      assert.equal(await h.worker.runOnce(), 1, `attempt ${n} made on time`);
    }

    // Six requests reached the receiver (attempt 4 was refused), at the documented clock offsets.
    const seen = receiver.requests.filter((r) => r.headers['x-svc-event-id'] === delivery.event_id);
    assert.deepEqual(
      seen.map((r) => r.headers['x-svc-attempt']),
      ['1', '2', '3', '5', '6', '7'],
    );
    assert.deepEqual(
      seen.map((r) => r.clockMs - start),
      [0, 1, 2, 4, 5, 6].map((i) => OFFSETS[i]),
    );
    assert.equal(new Set(seen.map((r) => r.headers['x-idempotency-key'])).size, 1, 'one idempotency key');

    const failed = await getDelivery(h, delivery.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.attempt_count, 7);
    assert.equal(failed.retry_count, 6);
    assert.equal(failed.next_retry_at, null);
    assert.equal(failed.delivered_at, null);
    assert.equal(failed.response_status_code, 503);
    assert.equal(failed.error_message, 'HTTP 503 Service Unavailable');
    assert.deepEqual(
      failed.attempts.map((a) => [a.n, a.response_status_code]),
      [
        [1, 500],
        [2, null],
        [3, null],
        [4, null],
        [5, 503],
        [6, 503],
        [7, 503],
      ],
    );
    assert.match(failed.attempts[1]?.error_message ?? '', /Timed out after 1 s/);
    assert.match(failed.attempts[2]?.error_message ?? '', /closed|reset|socket/i);
    assert.match(failed.attempts[3]?.error_message ?? '', /Connection refused/);
    assert.equal(failed.attempts[4]?.response_body_excerpt, 'down for maintenance');
    assert.deepEqual(
      failed.attempts.map((a) => Date.parse(a.started_at) - start),
      OFFSETS,
    );

    // Nothing more is attempted, however long we wait.
    h.t.clock.advance(48 * 60 * MIN);
    assert.equal(await h.worker.runOnce(), 0);
    await h.relogin();

    const dlq = expectStatus<{ results: DeadLetterOut[]; pagination: { total: number } }>(
      await call(h.t, '/webhooks/dlq', { token: h.token }),
      200,
    );
    assert.equal(dlq.pagination.total, 1);
    const entry = dlq.results[0];
    assert.ok(entry);
    assert.equal(entry.delivery_id, delivery.id);
    assert.deepEqual(entry.webhook, { id: hook.id, name: 'flaky', url: receiver.url });
    assert.equal(entry.event_type, 'geofence.enter');
    assert.equal(entry.event_id, delivery.event_id);
    assert.equal(entry.error_message, 'HTTP 503 Service Unavailable');
    assert.equal(entry.retry_count, 6);
    assert.equal(entry.last_attempt_at, new Date(start + (OFFSETS[6] ?? 0)).toISOString());
    assert.equal(entry.requeued, false);

    const notes = expectStatus<{ results: Array<{ type: string; data: Record<string, unknown> }> }>(
      await call(h.t, '/account/notifications', { token: h.token }),
      200,
    );
    const note = notes.results.find((n) => n.type === 'webhook.dead_letter');
    assert.ok(note, 'the workspace admin was notified');
    assert.deepEqual(note.data.dlq_ids, [entry.dlq_id]);
    // By e-mail too, with a link to the dashboard page that retries it.
    const mail = await sink.waitFor(
      (m) => m.to.includes(h.user.email) && m.subject.includes('dead-letter queue'),
    );
    assert.ok(
      mail.text.includes(
        `Review and retry on the dashboard: https://geo.example.test/webhooks/dead-letters?webhook=${hook.id}`,
      ),
      mail.text,
    );

    const statsBefore = expectStatus<Record<string, unknown>>(
      await call(h.t, '/webhooks/dlq/stats', { token: h.token }),
      200,
    );
    assert.deepEqual(statsBefore, {
      total_entries: 1,
      not_requeued: 1,
      requeued: 0,
      top_failed_webhooks: [{ webhook_id: hook.id, webhook_name: 'flaky', count: 1 }],
    });

    // Another workspace sees none of it: 404 for the entry's retry, empty list and stats.
    const stranger = (await signUp(h.t, 'stranger')).tokens.access_token;
    expectError(
      await call(h.t, `/webhooks/dlq/${entry.dlq_id}/retry`, { token: stranger, method: 'POST' }),
      404,
      'NOT_FOUND',
    );
    assert.equal(
      expectStatus<{ pagination: { total: number } }>(
        await call(h.t, '/webhooks/dlq', { token: stranger }),
        200,
      ).pagination.total,
      0,
    );
    assert.equal(
      expectStatus<{ total_entries: number }>(
        await call(h.t, '/webhooks/dlq/stats', { token: stranger }),
        200,
      ).total_entries,
      0,
    );

    // The dead-letter retry: a new delivery, attempt counter 0, same key and payload; succeeds.
    receiver.respond = () => ({ status: 204 });
    const retried = expectStatus<{ delivery_id: string; status: string }>(
      await call(h.t, `/webhooks/dlq/${entry.dlq_id}/retry`, { token: h.token, method: 'POST' }),
      202,
    );
    assert.equal(retried.status, 'pending');
    assert.notEqual(retried.delivery_id, delivery.id);
    const fresh = await getDelivery(h, retried.delivery_id);
    assert.equal(fresh.status, 'pending');
    assert.equal(fresh.attempt_count, 0);
    assert.equal(fresh.idempotency_key, failed.idempotency_key);
    const count = receiver.requests.length;
    assert.equal(await h.worker.runOnce(), 1);
    const last = receiver.requests[count];
    assert.equal(last?.headers['x-svc-attempt'], '1');
    assert.equal(last?.headers['x-idempotency-key'], failed.idempotency_key);
    assert.deepEqual(last?.body, seen[0]?.body, 'the very same payload bytes');
    const done = await getDelivery(h, retried.delivery_id);
    assert.equal(done.status, 'success');
    assert.equal(done.attempt_count, 1);
    assert.equal(done.response_status_code, 204);

    const requeued = expectStatus<{ results: DeadLetterOut[] }>(
      await call(h.t, '/webhooks/dlq', { token: h.token, query: { requeued: 'true' } }),
      200,
    );
    assert.deepEqual(
      requeued.results.map((e) => [e.dlq_id, e.requeued]),
      [[entry.dlq_id, true]],
    );
    const notRequeued = expectStatus<{ results: DeadLetterOut[] }>(
      await call(h.t, '/webhooks/dlq', { token: h.token, query: { requeued: 'false' } }),
      200,
    );
    assert.equal(notRequeued.results.length, 0);
    const statsAfter = expectStatus<Record<string, unknown>>(
      await call(h.t, '/webhooks/dlq/stats', { token: h.token }),
      200,
    );
    assert.deepEqual(statsAfter, {
      total_entries: 1,
      not_requeued: 0,
      requeued: 1,
      top_failed_webhooks: [{ webhook_id: hook.id, webhook_name: 'flaky', count: 1 }],
    });
    expectError(
      await call(h.t, '/webhooks/dlq/00000000-0000-7000-8000-000000000000/retry', {
        token: h.token,
        method: 'POST',
      }),
      404,
      'NOT_FOUND',
    );
  });

  test('a short WEBHOOK_RETRY_SCHEDULE gives length + 1 attempts', async () => {
    const short = await startDeliveryHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '1s,2s' } });
    const down = await Receiver.start(
      () => short.t.clock.now().getTime(),
      () => ({ status: 500 }),
    );
    try {
      const hook = await createWebhook(short, { url: down.url });
      const { delivery_id } = expectStatus<{ delivery_id: string }>(
        await call(short.t, `/webhooks/${hook.id}/test`, { token: short.token, method: 'POST' }),
        202,
      );
      await deliverDue(short);
      short.t.clock.advance(1000);
      await deliverDue(short);
      short.t.clock.advance(2000);
      await deliverDue(short);
      short.t.clock.advance(60 * MIN);
      await deliverDue(short);
      const record = await getDelivery(short, delivery_id);
      assert.equal(record.status, 'failed');
      assert.equal(record.attempt_count, 3);
      assert.deepEqual(
        down.requests.map((r) => r.headers['x-svc-attempt']),
        ['1', '2', '3'],
      );
    } finally {
      await short.close();
      await down.close();
    }
  });
});
