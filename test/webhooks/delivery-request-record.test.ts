/**
 * What a delivery's record shows of its request (ADR 018): `request_body` is the exact body every
 * attempt sent, and each attempt's `request_headers` are the headers the loopback receiver saw —
 * signature, event id, idempotency key, attempt number, custom headers — with every custom
 * header's value masked; the recorded signature verifies over the recorded body with the secret.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { uuidv7 } from '../../src/shared/ids.ts';
import { verifySignature } from '../../src/webhooks/signature.ts';
import {
  createWebhook,
  type DeliveryHarness,
  deliverDue,
  getDelivery,
  type Received,
  Receiver,
  sendTest,
  startDeliveryHarness,
} from './delivery-helpers.ts';

/** Headers the HTTP client adds by itself; the record lists the headers we set. */
const CLIENT_HEADERS = new Set(['host', 'content-length', 'connection']);

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The recorded headers are exactly what arrived, in the order they arrived (names case-insensitive). */
function assertSameHeaders(recorded: Record<string, string>, received: Received, masked: readonly string[]) {
  // Node keeps the arrival order in `headers`.
  const arrived = Object.keys(received.headers).filter((name) => !CLIENT_HEADERS.has(name));
  assert.deepEqual(
    Object.keys(recorded).map((n) => n.toLowerCase()),
    arrived,
    'the same header names, in the order sent',
  );
  for (const [name, value] of Object.entries(recorded)) {
    const sent = received.headers[name.toLowerCase()];
    if (masked.includes(name)) {
      assert.equal(value, '•••', `${name} is masked in the record`);
      assert.notEqual(sent, '•••', `${name} was sent with its real value`);
    } else {
      assert.equal(value, sent, `${name} as sent`);
    }
  }
}

describe('the request of each attempt, as recorded', () => {
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

  test('every attempt records the headers the receiver saw; the signature verifies over request_body', async () => {
    const custom = {
      'X-Tenant': 'acme',
      Authorization: 'Bearer live-credential',
      'X-Api-Key': 'k-123',
      'X-Session-Token': 'tok',
      'X-Client-Secret': 'shh',
    };
    const hook = await createWebhook(h, { url: receiver.url, headers: custom });
    receiver.respond = (_r, index) => (index === 0 ? { status: 500, body: 'boom' } : { status: 200 });
    const first = receiver.requests.length;
    const id = await sendTest(h, hook.id);
    assert.equal(await deliverDue(h), 1);
    const pending = await getDelivery(h, id);
    assert.equal(pending.status, 'pending');
    h.t.clock.set(pending.next_retry_at ?? '');
    assert.equal(await h.worker.runOnce(), 1, 'the second attempt');

    const record = await getDelivery(h, id);
    assert.equal(record.status, 'success');
    assert.equal(record.attempts.length, 2);
    // Every custom header is masked, whatever its name says.
    const masked = ['Authorization', 'X-Api-Key', 'X-Session-Token', 'X-Client-Secret', 'X-Tenant'];
    for (const [i, attempt] of record.attempts.entries()) {
      const received = receiver.requests[first + i];
      assert.ok(received && attempt.request_headers, `attempt ${i + 1} arrived and was recorded`);
      const headers = attempt.request_headers;
      assertSameHeaders(headers, received, masked);
      assert.equal(headers['x-svc-attempt'], String(i + 1));
      assert.equal(headers['x-geofencing-service-attempt'], String(i + 1));
      assert.equal(headers['x-idempotency-key'], record.idempotency_key);
      assert.equal(headers['x-svc-event-id'], record.event_id);
      // The body shown is the body sent, and the recorded signature is the one the receiver checked.
      assert.equal(record.request_body, received.body.toString('utf8'));
      assert.equal(headers['x-svc-signature'], received.headers['x-svc-signature']);
      assert.ok(verifySignature(record.request_body ?? '', headers['x-svc-signature'], hook.secret));
    }
    // The custom headers come first, then ours.
    assert.deepEqual(
      Object.keys(record.attempts[0]?.request_headers ?? {})
        .slice(0, 5)
        .sort(),
      Object.keys(custom).sort(),
    );
  });

  test('a GET delivery has no request_body; its recorded signature is that of the empty body', async () => {
    const hook = await createWebhook(h, { url: receiver.url, method: 'GET' });
    receiver.respond = () => ({ status: 204 });
    const first = receiver.requests.length;
    const id = await sendTest(h, hook.id);
    assert.equal(await deliverDue(h), 1);
    const record = await getDelivery(h, id);
    assert.equal(record.request_body, null);
    const received = receiver.requests[first];
    const headers = record.attempts[0]?.request_headers;
    assert.ok(received && headers);
    assertSameHeaders(headers, received, []);
    assert.ok(verifySignature('', headers['x-svc-signature'], hook.secret), 'HMAC of the empty body');
  });

  test('an attempt without a response still shows the request it was built with', async () => {
    const hook = await createWebhook(h, { url: `http://127.0.0.1:${await closedPort()}/hook` });
    const id = await sendTest(h, hook.id);
    assert.equal(await deliverDue(h), 1);
    const record = await getDelivery(h, id);
    const attempt = record.attempts[0];
    assert.ok(attempt);
    assert.equal(attempt.response_status_code, null);
    assert.match(attempt.error_message ?? '', /refused/i);
    assert.equal(attempt.request_headers?.['x-svc-attempt'], '1');
    assert.ok(
      verifySignature(record.request_body ?? '', attempt.request_headers?.['x-svc-signature'], hook.secret),
    );
  });

  test('an attempt recorded before headers were kept shows request_headers null', async () => {
    const hook = await createWebhook(h, { url: receiver.url });
    const id = await sendTest(h, hook.id);
    // A row as migration 0011 finds it: every column of an attempt but the new one.
    await h.t.deps.database.db
      .insertInto('webhook_delivery_attempts')
      .values({
        id: uuidv7(),
        delivery_id: id,
        n: 1,
        started_at: h.t.clock.now(),
        duration_ms: 12.5,
        response_status_code: 503,
        error_message: 'HTTP 503 Service Unavailable',
        response_body_excerpt: null,
        request_headers: null,
      })
      .execute();
    const record = await getDelivery(h, id);
    assert.deepEqual(
      record.attempts.map((a) => [a.n, a.response_status_code, a.request_headers]),
      [[1, 503, null]],
    );
  });
});
