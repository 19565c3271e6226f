/**
 * The delivery portal's other operations (contract §5 "Operating deliveries", ADR 018) over real
 * HTTP with a manual clock and a real receiver: a resend of a successful delivery (a new delivery,
 * the same payload and idempotency key, attempts counted from 1); delivery rows that name their
 * device, geofence and origin, and the `event_id` filter that lists every delivery of one event;
 * a webhook's health over a window, percentiles by nearest rank from attempts of known durations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { uuidv7 } from '../../src/shared/ids.ts';
import { call, expectError, expectStatus } from '../helpers/identity.ts';
import {
  createWebhook,
  type DeliveryHarness,
  type DeliveryOut,
  deliverDue,
  eventSource,
  getDelivery,
  listAllDeliveries,
  Receiver,
  sendTest,
  startDeliveryHarness,
} from './delivery-helpers.ts';

interface PortalDelivery extends DeliveryOut {
  origin: string;
  source_delivery_id: string | null;
  event_record_id: string | null;
  device_id: string | null;
  device_name: string | null;
  geofence_name: string | null;
}

interface HealthOut {
  window: string;
  attempts: number;
  success_rate: number | null;
  p50_ms: number | null;
  p95_ms: number | null;
  last_failure_at: string | null;
  last_failure_message: string | null;
  consecutive_failures: number;
}

describe('resend, delivery subjects, the event filter and webhook health', () => {
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

  const resend = (id: string) =>
    call(h.t, `/webhooks/deliveries/${id}/resend`, { token: h.token, method: 'POST' });

  test('a successful delivery is resent as a new one: same payload and idempotency key, attempt 1', async () => {
    const webhook = await createWebhook(h, { url: receiver.url });
    const first = await sendTest(h, webhook.id);
    await deliverDue(h);
    assert.equal((await getDelivery(h, first)).status, 'success');

    const accepted = expectStatus<{ delivery_id: string; status: string }>(
      await resend(first),
      202,
      'resend',
    );
    assert.notEqual(accepted.delivery_id, first);
    assert.equal(accepted.status, 'pending');
    await deliverDue(h);
    const [original, again] = [await getDelivery(h, first), await getDelivery(h, accepted.delivery_id)];
    const copy = again as unknown as PortalDelivery;
    assert.equal(copy.origin, 'resend');
    assert.equal(copy.source_delivery_id, first);
    assert.equal(again.status, 'success');
    assert.equal(again.idempotency_key, original.idempotency_key);
    assert.equal(again.request_body, original.request_body);
    assert.deepEqual(
      again.attempts.map((a) => a.n),
      [1],
      'a new delivery counts its own attempts',
    );
    const [sent1, sent2] = receiver.requests.slice(-2);
    assert.ok(sent1 && sent2);
    assert.equal(sent2.headers['x-idempotency-key'], sent1.headers['x-idempotency-key']);
    assert.equal(sent2.headers['x-svc-attempt'], '1');
    assert.equal(sent2.body.toString(), sent1.body.toString(), 'the same bytes: the payload id stays');
    assert.equal((await getDelivery(h, first)).status, 'success', 'the old delivery is left as it was');

    expectError(await resend(crypto.randomUUID()), 404, 'NOT_FOUND', 'unknown delivery');
    expectStatus(await call(h.t, `/webhooks/${webhook.id}`, { token: h.token, method: 'DELETE' }), 204);
    const orphan = expectError(await resend(first), 404, 'NOT_FOUND', 'webhook deleted');
    assert.equal(orphan.detail, 'Webhook not found');
  });

  test('rows name their device, geofence and origin; event_id lists every delivery of one event', async () => {
    const webhook = await createWebhook(h, { url: receiver.url });
    const source = await eventSource(h);
    await source.step(true);
    await deliverDue(h);
    const events = expectStatus<{ results: Array<{ id: string }> }>(
      await call(h.t, '/events', { token: h.token, query: { device_id: source.device.id } }),
      200,
    ).results;
    assert.equal(events.length, 1);
    const eventId = events[0]?.id ?? '';
    const listed = (await listAllDeliveries(h, { event_id: eventId })).results as PortalDelivery[];
    assert.equal(listed.length, 1);
    const [row] = listed;
    assert.deepEqual(
      [row?.origin, row?.device_id, row?.device_name, row?.geofence_name, row?.event_record_id],
      ['subscription', source.device.id, 'truck', 'Depot', eventId],
    );
    // A resend is a delivery of the same event: the filter lists it too, newest first.
    const copy = expectStatus<{ delivery_id: string }>(await resend(row?.id ?? ''), 202).delivery_id;
    const both = (await listAllDeliveries(h, { event_id: eventId })).results as PortalDelivery[];
    assert.deepEqual(
      both.map((d) => [d.id, d.origin, d.device_id]),
      [
        [copy, 'resend', source.device.id],
        [row?.id, 'subscription', source.device.id],
      ],
    );
    const perWebhook = expectStatus<{ results: PortalDelivery[] }>(
      await call(h.t, `/webhooks/${webhook.id}/deliveries`, { token: h.token, query: { event_id: eventId } }),
      200,
    );
    assert.equal(perWebhook.results.length, 2);
    assert.equal((await listAllDeliveries(h, { event_id: crypto.randomUUID() })).results.length, 0);
    // A test delivery has no event: no device, geofence or event record.
    const test = (await getDelivery(h, await sendTest(h, webhook.id))) as unknown as PortalDelivery;
    assert.deepEqual(
      [test.origin, test.device_id, test.geofence_name, test.event_record_id],
      ['test', null, null, null],
    );
    expectStatus(await call(h.t, `/webhooks/${webhook.id}`, { token: h.token, method: 'DELETE' }), 204);
  });

  test('health: success rate, nearest-rank p50/p95, last failure and the current run of failures', async () => {
    const webhook = await createWebhook(h, { url: receiver.url });
    const health = async (window?: string): Promise<HealthOut> =>
      expectStatus<HealthOut>(
        await call(h.t, `/webhooks/${webhook.id}/health`, {
          token: h.token,
          query: window === undefined ? {} : { window },
        }),
        200,
        'health',
      );
    const empty = await health();
    assert.deepEqual(empty, {
      window: '24h',
      attempts: 0,
      success_rate: null,
      p50_ms: null,
      p95_ms: null,
      last_failure_at: null,
      last_failure_message: null,
      consecutive_failures: 0,
    });

    // Attempts of known durations, written where the worker writes them: 20 in the last hour
    // (durations 10, 20, …, 200 ms; the 5th and the two newest failed), one 3 hours ago (failed).
    const now = h.t.clock.now().getTime();
    const deliveryId = await sendTest(h, webhook.id);
    const attempt = (
      n: number,
      minutesAgo: number,
      ms: number,
      status: number | null,
      error: string | null,
    ) => ({
      id: uuidv7(),
      delivery_id: deliveryId,
      n,
      started_at: new Date(now - minutesAgo * 60_000),
      duration_ms: ms,
      response_status_code: status,
      error_message: error,
      response_body_excerpt: null,
      request_headers: null,
    });
    const rows = [attempt(1, 180, 5000, 503, 'HTTP 503 Service Unavailable')];
    for (let i = 1; i <= 20; i++) {
      const minutesAgo = 50 - i * 2;
      if (i === 5) rows.push(attempt(i + 1, minutesAgo, i * 10, 500, 'HTTP 500 Internal Server Error'));
      else if (i >= 19) rows.push(attempt(i + 1, minutesAgo, i * 10, null, `Timed out (${i})`));
      else rows.push(attempt(i + 1, minutesAgo, i * 10, 200, null));
    }
    await h.t.deps.database.db.insertInto('webhook_delivery_attempts').values(rows).execute();

    const hour = await health('1h');
    assert.equal(hour.attempts, 20);
    assert.equal(hour.success_rate, 17 / 20);
    // Nearest rank over 10..200: p50 = 10th value, p95 = 19th value.
    assert.equal(hour.p50_ms, 100);
    assert.equal(hour.p95_ms, 190);
    assert.equal(hour.last_failure_message, 'Timed out (20)');
    assert.equal(hour.last_failure_at, new Date(now - 10 * 60_000).toISOString());
    assert.equal(hour.consecutive_failures, 2);

    const day = await health('24h');
    assert.equal(day.attempts, 21);
    assert.equal(day.success_rate, 17 / 21);
    assert.equal(day.p95_ms, 200);
    assert.equal((await health('7d')).attempts, 21);

    const bad = expectError(
      await call(h.t, `/webhooks/${webhook.id}/health`, { token: h.token, query: { window: '2w' } }),
      422,
      'VALIDATION_ERROR',
    );
    assert.deepEqual(
      (bad.detail as Array<{ loc: unknown[] }>).map((d) => d.loc),
      [['query', 'window']],
    );
    expectError(
      await call(h.t, `/webhooks/${crypto.randomUUID()}/health`, { token: h.token }),
      404,
      'NOT_FOUND',
    );
  });
});
