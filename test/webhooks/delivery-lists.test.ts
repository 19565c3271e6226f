/**
 * The delivery lists of the delivery portal (ADR 018): GET /webhooks/deliveries across the
 * workspace and GET /webhooks/{id}/deliveries, filtered by webhook, status, event type, the class
 * of the last attempt's HTTP status (a real receiver answering 500 and 204, a refused connection
 * for `none`) and an inclusive created_at range; `from` after `to` is a 422 as on /events.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { call, expectError, expectStatus, signUp } from '../helpers/identity.ts';
import {
  createWebhook,
  type DeliveryHarness,
  deliverDue,
  eventSource,
  listAllDeliveries,
  listDeliveries,
  Receiver,
  sendTest,
  startDeliveryHarness,
} from './delivery-helpers.ts';

const MIN = 60_000;

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('delivery lists and their filters', () => {
  let h: DeliveryHarness;
  let receiver: Receiver;
  const id: Record<string, string> = {};
  const hook: Record<string, string> = {};
  let t0: number;
  const iso = (ms: number) => new Date(ms).toISOString();

  before(async () => {
    h = await startDeliveryHarness();
    receiver = await Receiver.start(() => h.t.clock.now().getTime());
    receiver.respond = (r) => ({ status: r.url.includes('answer=500') ? 500 : 204, body: '' });
    // Only `ok` subscribes to geofence.enter; the others receive test deliveries alone.
    hook.failing = (
      await createWebhook(h, { url: `${receiver.url}?answer=500`, events: ['geofence.dwell'] })
    ).id;
    hook.ok = (await createWebhook(h, { url: `${receiver.url}?answer=204`, events: ['geofence.enter'] })).id;
    hook.down = (
      await createWebhook(h, {
        url: `http://127.0.0.1:${await closedPort()}/hook`,
        events: ['geofence.dwell'],
      })
    ).id;
    const source = await eventSource(h);
    t0 = h.t.clock.now().getTime();
    id.failing = await sendTest(h, hook.failing);
    h.t.clock.set(t0 + MIN);
    id.okTest = await sendTest(h, hook.ok);
    h.t.clock.set(t0 + 2 * MIN);
    id.down = await sendTest(h, hook.down);
    h.t.clock.set(t0 + 3 * MIN);
    await source.step(true);
    assert.equal(await deliverDue(h), 4, 'four deliveries attempted once each');
    const enter = (await listDeliveries(h, hook.ok, { event_type: 'geofence.enter' })).results[0];
    assert.ok(enter);
    id.okEnter = enter.id;
    // Created after the worker ran: pending, never attempted.
    h.t.clock.set(t0 + 4 * MIN);
    id.idle = await sendTest(h, hook.ok);
  });
  after(async () => {
    await h.close();
    await receiver.close();
  });

  const idsOf = (page: { results: Array<{ id: string }> }) => page.results.map((d) => d.id);

  test('every webhook of the workspace, newest first, with the usual envelope', async () => {
    const page = await listAllDeliveries(h);
    assert.deepEqual(idsOf(page), [id.idle, id.okEnter, id.down, id.okTest, id.failing]);
    assert.deepEqual(page.pagination, { total: 5, limit: 200, offset: 0, has_more: false });
    const first = await listAllDeliveries(h, { limit: '2', offset: '1' });
    assert.deepEqual(idsOf(first), [id.okEnter, id.down]);
    assert.deepEqual(first.pagination, { total: 5, limit: 2, offset: 1, has_more: true });
  });

  test('status_class: the HTTP status class of the last attempt, or none without a response', async () => {
    const byClass = async (c: string) => idsOf(await listAllDeliveries(h, { status_class: c }));
    assert.deepEqual(await byClass('5xx'), [id.failing]);
    assert.deepEqual(await byClass('2xx'), [id.okEnter, id.okTest]);
    assert.deepEqual(
      await byClass('none'),
      [id.down],
      'refused connection; the unattempted one has no class',
    );
    assert.deepEqual(await byClass('4xx'), []);
    assert.deepEqual(await byClass('3xx'), []);
    const down = (await listAllDeliveries(h, { status_class: 'none' })).results[0];
    assert.equal(down?.response_status_code, null);
    assert.match(down?.error_message ?? '', /refused/i);
  });

  test('status, event_type and webhook_id, alone and combined', async () => {
    assert.deepEqual(idsOf(await listAllDeliveries(h, { status: 'success' })), [id.okEnter, id.okTest]);
    assert.deepEqual(idsOf(await listAllDeliveries(h, { status: 'pending' })), [
      id.idle,
      id.down,
      id.failing,
    ]);
    assert.deepEqual(idsOf(await listAllDeliveries(h, { status: 'failed' })), []);
    assert.deepEqual(idsOf(await listAllDeliveries(h, { event_type: 'geofence.enter' })), [id.okEnter]);
    assert.deepEqual(idsOf(await listAllDeliveries(h, { event_type: 'geofence.dwell' })), []);
    assert.equal((await listAllDeliveries(h, { event_type: 'webhook.test' })).pagination.total, 4);
    assert.deepEqual(idsOf(await listAllDeliveries(h, { webhook_id: hook.ok ?? '' })), [
      id.idle,
      id.okEnter,
      id.okTest,
    ]);
    assert.deepEqual(
      idsOf(
        await listAllDeliveries(h, {
          webhook_id: hook.ok ?? '',
          status_class: '2xx',
          event_type: 'webhook.test',
        }),
      ),
      [id.okTest],
    );
    assert.deepEqual(idsOf(await listAllDeliveries(h, { webhook_id: crypto.randomUUID() })), []);
  });

  test('from/to bound created_at inclusively', async () => {
    assert.deepEqual(idsOf(await listAllDeliveries(h, { from: iso(t0 + MIN), to: iso(t0 + 2 * MIN) })), [
      id.down,
      id.okTest,
    ]);
    assert.deepEqual(idsOf(await listAllDeliveries(h, { from: iso(t0 + MIN), to: iso(t0 + MIN) })), [
      id.okTest,
    ]);
    assert.deepEqual(idsOf(await listAllDeliveries(h, { from: iso(t0 + 3 * MIN) })), [id.idle, id.okEnter]);
    assert.deepEqual(idsOf(await listAllDeliveries(h, { to: iso(t0 + MIN - 1) })), [id.failing]);
  });

  test("one webhook's list takes the same filters", async () => {
    const ok = hook.ok ?? '';
    assert.deepEqual(idsOf(await listDeliveries(h, ok, { status_class: '2xx' })), [id.okEnter, id.okTest]);
    assert.deepEqual(idsOf(await listDeliveries(h, ok, { event_type: 'webhook.test' })), [
      id.idle,
      id.okTest,
    ]);
    assert.deepEqual(idsOf(await listDeliveries(h, ok, { from: iso(t0 + 2 * MIN), to: iso(t0 + 3 * MIN) })), [
      id.okEnter,
    ]);
    assert.deepEqual(idsOf(await listDeliveries(h, hook.down ?? '', { status_class: 'none' })), [id.down]);
    assert.deepEqual(idsOf(await listDeliveries(h, hook.down ?? '', { status_class: '2xx' })), []);
  });

  test('422: from after to (as on /events), a value outside an enum, a malformed date', async () => {
    const swapped = { from: iso(t0 + MIN), to: iso(t0) };
    for (const path of [
      '/webhooks/deliveries',
      `/webhooks/${hook.ok}/deliveries`,
      '/webhooks/dlq',
      '/events',
    ]) {
      const body = expectError(
        await call(h.t, path, { token: h.token, query: swapped }),
        422,
        'VALIDATION_ERROR',
        path,
      );
      assert.deepEqual(body.detail, [
        { type: 'value_error', loc: ['query', 'from'], msg: 'from must not be after to' },
      ]);
    }
    const invalid: Array<Record<string, string>> = [
      { status_class: '6xx' },
      { status: 'done' },
      { event_type: 'geofence.leave' },
    ];
    for (const query of invalid) {
      const body = expectError(
        await call(h.t, '/webhooks/deliveries', { token: h.token, query }),
        422,
        'VALIDATION_ERROR',
        JSON.stringify(query),
      );
      const [issue] = body.detail as Array<{ type: string; loc: string[] }>;
      assert.deepEqual(issue?.loc, ['query', Object.keys(query)[0]]);
    }
    expectError(
      await call(h.t, '/webhooks/deliveries', { token: h.token, query: { from: 'yesterday' } }),
      422,
      'VALIDATION_ERROR',
    );
  });

  test("another workspace's deliveries are never listed, even when its webhook is named", async () => {
    const other = await signUp(h.t, 'other-hooks');
    const otherHook = expectStatus<{ id: string }>(
      await call(h.t, '/webhooks', {
        token: other.tokens.access_token,
        body: { name: 'theirs', url: receiver.url },
      }),
      201,
    );
    const theirs = expectStatus<{ delivery_id: string }>(
      await call(h.t, `/webhooks/${otherHook.id}/test`, { token: other.tokens.access_token, method: 'POST' }),
      202,
    ).delivery_id;
    assert.ok(!idsOf(await listAllDeliveries(h)).includes(theirs));
    assert.deepEqual(idsOf(await listAllDeliveries(h, { webhook_id: otherHook.id })), []);
    expectError(
      await call(h.t, `/webhooks/${otherHook.id}/deliveries`, { token: h.token }),
      404,
      'NOT_FOUND',
    );
    const own = await call(h.t, '/webhooks/deliveries', { token: other.tokens.access_token });
    assert.deepEqual(idsOf(expectStatus(own, 200)), [theirs]);
  });
});
