/**
 * The delivery request of seed §6.2 / contract §5 at a real loopback receiver: method, headers,
 * signature (verified with the receiver-side function; one changed byte fails), payload of seed
 * §6.3 and of `webhook.test`, GET without body, no redirects, the 1 KiB excerpt, custom headers
 * that cannot override ours, the SSRF guard, and the fan-out rules of the outbox dispatcher.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { sql } from 'kysely';
import { drainOutbox } from '../../src/engine.ts';
import { verifySignature } from '../../src/webhooks/signature.ts';
import { call, expectError, expectStatus } from '../helpers/identity.ts';
import {
  createWebhook,
  type DeliveryHarness,
  deliverDue,
  eventSource,
  getDelivery,
  listDeliveries,
  Receiver,
  startDeliveryHarness,
} from './delivery-helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('delivery request', () => {
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

  test('a geofence event arrives signed, with every header and the seed §6.3 payload', async () => {
    const hook = await createWebhook(h, { url: receiver.url, headers: { 'X-Tenant': 'acme' } });
    const source = await eventSource(h);
    await source.step(true);
    const before = receiver.requests.length;
    assert.equal(await deliverDue(h), 1);
    const req = receiver.requests[before];
    assert.ok(req, 'the receiver got the delivery');
    assert.equal(req.method, 'POST');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.headers['user-agent'], 'Service-Webhooks/1.0');
    assert.equal(req.headers['x-tenant'], 'acme');
    const signature = req.headers['x-svc-signature'] as string;
    assert.match(signature, /^sha256=[0-9a-f]{64}$/);
    assert.ok(verifySignature(req.body, signature, hook.secret), 'signature verifies over the raw body');
    // An independent implementation of the same `sha256=` scheme agrees.
    assert.equal(await octokitVerify(hook.secret, req.body.toString('utf8'), signature), true);
    const tampered = Buffer.from(req.body);
    tampered[tampered.length - 2] = (tampered[tampered.length - 2] ?? 0) ^ 1;
    assert.equal(verifySignature(tampered, signature, hook.secret), false, 'one changed byte fails');
    assert.equal(await octokitVerify(hook.secret, tampered.toString('utf8'), signature), false);
    assert.equal(verifySignature(req.body, signature, `${hook.secret}x`), false, 'another secret fails');

    const payload = JSON.parse(req.body.toString('utf8'));
    assert.match(payload.id, UUID);
    assert.equal(payload.event, 'geofence.enter');
    assert.ok(!Number.isNaN(Date.parse(payload.timestamp)) && payload.timestamp.endsWith('Z'));
    assert.match(payload.data.event_id, new RegExp(`^${source.geofence.id}_enter_\\d+$`));
    assert.equal(payload.data.user_id, 'driver-7');
    assert.equal(payload.data.geofence_id, source.geofence.id);
    assert.equal(payload.data.geofence_name, 'Depot');
    assert.equal(payload.data.event_type, 'enter');
    assert.deepEqual(payload.data.point, { type: 'Point', coordinates: [13.4, 52.5] });
    assert.deepEqual(payload.data.metadata, {
      geofence_metadata: { site: 'north' },
      event_metadata: { step: 1 },
    });
    assert.equal(req.headers['x-svc-event-id'], payload.data.event_id);
    assert.equal(req.headers['x-idempotency-key'], payload.id);
    assert.equal(req.headers['x-svc-attempt'], '1');
    assert.equal(req.headers['x-geofencing-service-signature'], signature);
    assert.equal(req.headers['x-geofencing-service-event-id'], payload.data.event_id);
    assert.equal(req.headers['x-geofencing-service-attempt'], '1');

    const list = await listDeliveries(h, hook.id);
    assert.equal(list.results.length, 1);
    const record = await getDelivery(h, list.results[0]?.id ?? '');
    assert.equal(record.status, 'success');
    assert.equal(record.event_type, 'geofence.enter');
    assert.equal(record.event_id, payload.data.event_id);
    assert.equal(record.geofence_id, source.geofence.id);
    assert.equal(record.webhook_id, hook.id);
    assert.equal(record.url, receiver.url);
    assert.equal(record.method, 'POST');
    assert.equal(record.response_status_code, 200);
    assert.equal(record.response_status, 200);
    assert.equal(record.attempt_count, 1);
    assert.equal(record.retry_count, 0);
    assert.equal(record.idempotency_key, payload.id);
    assert.equal(record.delivered_at, h.t.clock.now().toISOString());
    assert.equal(record.next_retry_at, null);
    assert.equal(record.error_message, null);
    assert.equal(record.attempts.length, 1);
    assert.equal(record.attempts[0]?.n, 1);
    assert.equal(record.attempts[0]?.response_body_excerpt, 'ok');
    assert.equal(typeof record.response_time_ms, 'number');
    await call(h.t, `/webhooks/${hook.id}`, { token: h.token, method: 'DELETE' });
  });

  test('GET deliveries carry no body and sign the empty body; webhook.test payload', async () => {
    const hook = await createWebhook(h, { url: receiver.url, method: 'GET' });
    const res = await call(h.t, `/webhooks/${hook.id}/test`, { token: h.token, method: 'POST' });
    const { delivery_id } = expectStatus<{ delivery_id: string }>(res, 202, 'test delivery');
    const before = receiver.requests.length;
    await deliverDue(h);
    const req = receiver.requests[before];
    assert.ok(req);
    assert.equal(req.method, 'GET');
    assert.equal(req.body.length, 0);
    assert.ok(verifySignature('', req.headers['x-svc-signature'] as string, hook.secret));
    const record = await getDelivery(h, delivery_id);
    assert.equal(record.status, 'success');
    assert.equal(record.event_type, 'webhook.test');
    assert.match(record.event_id, /^webhook_test_\d+$/);
    assert.equal(req.headers['x-svc-event-id'], record.event_id);
    await call(h.t, `/webhooks/${hook.id}`, { token: h.token, method: 'DELETE' });

    const post = await createWebhook(h, { url: receiver.url, name: 'tester' });
    const { delivery_id: second } = expectStatus<{ delivery_id: string }>(
      await call(h.t, `/webhooks/${post.id}/test`, { token: h.token, method: 'POST' }),
      202,
    );
    const at = receiver.requests.length;
    await deliverDue(h);
    const body = JSON.parse(receiver.requests[at]?.body.toString('utf8') ?? '{}');
    assert.equal(body.event, 'webhook.test');
    assert.match(body.id, UUID);
    assert.equal(body.data.webhook_id, post.id);
    assert.equal(body.data.webhook_name, 'tester');
    assert.equal(typeof body.data.message, 'string');
    assert.match(body.data.event_id, /^webhook_test_\d+$/);
    assert.equal((await getDelivery(h, second)).status, 'success');
    expectError(
      await call(h.t, '/webhooks/00000000-0000-7000-8000-000000000000/test', {
        token: h.token,
        method: 'POST',
      }),
      404,
      'NOT_FOUND',
    );
    await call(h.t, `/webhooks/${post.id}`, { token: h.token, method: 'DELETE' });
  });

  test('3xx is a failure (not followed); only 1 KiB of the body is kept; our headers win', async () => {
    const hook = await createWebhook(h, { url: receiver.url });
    // A header the API would refuse, written straight into the row: the sender still drops it.
    await sql`update webhooks set headers = ${JSON.stringify({ 'X-SVC-Signature': 'forged', 'X-Extra': '1' })} where id = ${hook.id}`.execute(
      h.t.deps.database.db,
    );
    receiver.respond = () => ({
      status: 302,
      headers: { location: 'http://127.0.0.1:1/elsewhere' },
      body: 'x'.repeat(5000),
    });
    const { delivery_id } = expectStatus<{ delivery_id: string }>(
      await call(h.t, `/webhooks/${hook.id}/test`, { token: h.token, method: 'POST' }),
      202,
    );
    const at = receiver.requests.length;
    await deliverDue(h);
    assert.equal(receiver.requests.length, at + 1, 'the redirect was not followed');
    const req = receiver.requests[at];
    assert.equal(req?.headers['x-extra'], '1');
    assert.ok(verifySignature(req?.body ?? '', req?.headers['x-svc-signature'] as string, hook.secret));
    const record = await getDelivery(h, delivery_id);
    assert.equal(record.status, 'pending');
    assert.equal(record.response_status_code, 302);
    assert.match(record.error_message ?? '', /HTTP 302.*redirect/);
    assert.equal(record.attempts[0]?.response_body_excerpt, 'x'.repeat(1024));
    receiver.respond = () => ({});
    await call(h.t, `/webhooks/${hook.id}`, { token: h.token, method: 'DELETE' });
  });

  test('fan-out: subscribed types and geofence filters, one delivery per webhook, re-dispatch never doubles', async () => {
    const source = await eventSource(h, 2.35, 48.85);
    const all = await createWebhook(h, { url: receiver.url, name: 'all' });
    const exits = await createWebhook(h, { url: receiver.url, name: 'exits', events: ['geofence.exit'] });
    const other = await createWebhook(h, {
      url: receiver.url,
      name: 'other fence',
      geofence_ids: ['00000000-0000-7000-8000-000000000001'],
    }).catch(() => undefined);
    const mine = await createWebhook(h, {
      url: receiver.url,
      name: 'mine',
      geofence_ids: [source.geofence.id],
    });
    const disabled = await createWebhook(h, { url: receiver.url, name: 'off', enabled: false });
    await source.step(true);
    await source.step(false);
    await drainOutbox(h.t.deps);
    // A crash between fan-out and `dispatched_at` would dispatch again: simulate it.
    await sql`update event_outbox set dispatched_at = null where event_row_id in (select id from geofence_events where device_id = ${source.device.id})`.execute(
      h.t.deps.database.db,
    );
    await drainOutbox(h.t.deps);
    const count = async (id: string) => (await listDeliveries(h, id)).pagination.total;
    assert.equal(await count(all.id), 2);
    assert.equal(await count(exits.id), 1);
    assert.equal(await count(mine.id), 2);
    assert.equal(await count(disabled.id), 0);
    if (other) assert.equal(await count(other.id), 0);
    const exitOnly = await listDeliveries(h, exits.id);
    assert.equal(exitOnly.results[0]?.event_type, 'geofence.exit');
    await deliverDue(h);
    const statuses = await listDeliveries(h, all.id, { status: 'success' });
    assert.equal(statuses.pagination.total, 2);
    assert.equal((await listDeliveries(h, all.id, { status: 'pending' })).pagination.total, 0);
    // Newest first.
    assert.equal(statuses.results[0]?.event_type, 'geofence.exit');
    for (const hook of [all, exits, other, mine, disabled]) {
      if (hook) await call(h.t, `/webhooks/${hook.id}`, { token: h.token, method: 'DELETE' });
    }
  });

  test('one dispatch run: a workspace without webhooks has its rows marked dispatched, the other gets its deliveries', async () => {
    const { signUp } = await import('../helpers/identity.ts');
    const quiet = await signUp(h.t, 'no-webhooks');
    const quietSource = await eventSource({ ...h, token: quiet.tokens.access_token }, 2.55, 48.95);
    const source = await eventSource(h, 2.45, 48.9);
    const hook = await createWebhook(h, { url: receiver.url, name: 'mixed run' });
    await quietSource.step(true);
    await source.step(true);
    await quietSource.step(false);
    const before = (await drainOutbox(h.t.deps)).deliveries;
    assert.equal(before, 1, 'one delivery: the enter of the workspace with a webhook');
    const db = h.t.deps.database.db;
    const quietRows = await sql<{ n: number; pending: number }>`
      select count(*) as n, count(*) - count(o.dispatched_at) as pending from event_outbox o
      join geofence_events e on e.id = o.event_row_id where e.device_id = ${quietSource.device.id}`.execute(
      db,
    );
    assert.equal(Number(quietRows.rows[0]?.n), 2, 'both events of the quiet workspace are in the outbox');
    assert.equal(Number(quietRows.rows[0]?.pending), 0, 'and dispatched');
    const quietDeliveries = await sql<{ n: number }>`
      select count(*) as n from webhook_deliveries d join geofence_events e on e.id = d.event_row_id
      where e.device_id = ${quietSource.device.id}`.execute(db);
    assert.equal(Number(quietDeliveries.rows[0]?.n), 0);
    assert.equal((await listDeliveries(h, hook.id)).pagination.total, 1);
    await deliverDue(h);
    await call(h.t, `/webhooks/${hook.id}`, { token: h.token, method: 'DELETE' });
  });

  test('deliveries of another workspace are not found; scopes are enforced', async () => {
    const hook = await createWebhook(h, { url: receiver.url });
    const { delivery_id } = expectStatus<{ delivery_id: string }>(
      await call(h.t, `/webhooks/${hook.id}/test`, { token: h.token, method: 'POST' }),
      202,
    );
    const { signUp, createApiKey } = await import('../helpers/identity.ts');
    const stranger = await signUp(h.t, 'stranger');
    const token = stranger.tokens.access_token;
    expectError(await call(h.t, `/webhooks/deliveries/${delivery_id}`, { token }), 404, 'NOT_FOUND');
    expectError(await call(h.t, `/webhooks/${hook.id}/deliveries`, { token }), 404, 'NOT_FOUND');
    expectError(await call(h.t, `/webhooks/${hook.id}/test`, { token, method: 'POST' }), 404, 'NOT_FOUND');
    const readOnly = await createApiKey(h.t, h.token, ['webhooks:read']);
    expectStatus(await call(h.t, `/webhooks/deliveries/${delivery_id}`, { apiKey: readOnly.key }), 200);
    expectStatus(await call(h.t, '/webhooks/dlq', { apiKey: readOnly.key }), 200);
    expectError(
      await call(h.t, `/webhooks/${hook.id}/test`, { apiKey: readOnly.key, method: 'POST' }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
    const unrelated = await createApiKey(h.t, h.token, ['geofences:read']);
    expectError(
      await call(h.t, '/webhooks/dlq/stats', { apiKey: unrelated.key }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
    await deliverDue(h);
    await call(h.t, `/webhooks/${hook.id}`, { token: h.token, method: 'DELETE' });
  });
});

describe('SSRF guard at delivery time', () => {
  test('a host name resolving to loopback fails the attempt with a clear message; nothing is sent', async () => {
    const h = await startDeliveryHarness({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    const receiver = await Receiver.start();
    try {
      const port = new URL(receiver.url).port;
      const hook = await createWebhook(h, { url: `http://localhost:${port}/hook` });
      const { delivery_id } = expectStatus<{ delivery_id: string }>(
        await call(h.t, `/webhooks/${hook.id}/test`, { token: h.token, method: 'POST' }),
        202,
      );
      await deliverDue(h);
      assert.equal(receiver.requests.length, 0, 'nothing reached the receiver');
      const record = await getDelivery(h, delivery_id);
      assert.equal(record.status, 'pending');
      assert.equal(record.attempt_count, 1);
      assert.equal(record.response_status_code, null);
      assert.match(record.error_message ?? '', /localhost.*loopback.*nothing was sent/);
    } finally {
      await h.close();
      await receiver.close();
    }
  });
});
