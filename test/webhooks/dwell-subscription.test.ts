/**
 * Webhooks and `geofence.dwell` (contract §4.5, §5): a webhook subscribed to it alone receives a
 * dwell event and not the enter before it; one created without `events` keeps enter and exit and
 * receives no dwell. The dwell is stored as the engine stores events (row and outbox row) and
 * dispatched by the real outbox dispatcher; the delivery arrives signed with the seed §6.3 payload.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifySignature } from '../../src/webhooks/signature.ts';
import { latestEnter, storeDwellEvent } from '../events/dwell-event.ts';
import { call, expectStatus } from '../helpers/identity.ts';
import {
  createWebhook,
  type DeliveryHarness,
  deliverDue,
  eventSource,
  listDeliveries,
  Receiver,
  startDeliveryHarness,
  type WebhookOut,
} from './delivery-helpers.ts';

describe('webhook subscriptions to geofence.dwell', () => {
  let h: DeliveryHarness;
  let dwellReceiver: Receiver;
  let defaultReceiver: Receiver;
  let dwellHook: WebhookOut;
  let defaultHook: WebhookOut;

  before(async () => {
    h = await startDeliveryHarness();
    dwellReceiver = await Receiver.start(() => h.t.clock.now().getTime());
    defaultReceiver = await Receiver.start(() => h.t.clock.now().getTime());
    dwellHook = await createWebhook(h, { url: dwellReceiver.url, events: ['geofence.dwell'] });
    defaultHook = await createWebhook(h, { url: defaultReceiver.url });
  });
  after(async () => {
    await h.close();
    await dwellReceiver.close();
    await defaultReceiver.close();
  });

  test('the subscription is stored as sent; the default is still enter and exit', async () => {
    const read = async (id: string) =>
      expectStatus<{ events: string[] }>(await call(h.t, `/webhooks/${id}`, { token: h.token }), 200).events;
    assert.deepEqual(await read(dwellHook.id), ['geofence.dwell']);
    assert.deepEqual(await read(defaultHook.id), ['geofence.enter', 'geofence.exit']);
  });

  test('the dwell webhook receives the dwell alone; the default one the enter alone', async () => {
    const source = await eventSource(h);
    await source.step(true);
    const enter = await latestEnter(h.t, h.token, source.device.id, source.geofence.id);
    const dwell = await storeDwellEvent(h.t, h.user.workspace.id, enter, 300);

    assert.equal(await deliverDue(h), 2, 'one delivery each');
    assert.equal(dwellReceiver.requests.length, 1);
    assert.equal(defaultReceiver.requests.length, 1);

    const request = dwellReceiver.requests[0];
    assert.ok(request);
    assert.ok(
      verifySignature(request.body, request.headers['x-svc-signature'] as string, dwellHook.secret),
      'signed with the webhook secret',
    );
    const payload = JSON.parse(request.body.toString('utf8'));
    assert.deepEqual(payload, {
      id: request.headers['x-idempotency-key'],
      event: 'geofence.dwell',
      timestamp: dwell.occurredAt.toISOString(),
      data: {
        event_id: dwell.eventId,
        user_id: 'driver-7',
        device_id: source.device.id,
        geofence_id: source.geofence.id,
        geofence_name: 'Depot',
        event_type: 'dwell',
        point: enter.point,
        metadata: { geofence_metadata: { site: 'north' }, event_metadata: { step: 1 } },
      },
    });
    assert.match(dwell.eventId, new RegExp(`^${source.geofence.id}_dwell_\\d+$`));
    assert.equal(request.headers['x-svc-event-id'], dwell.eventId);
    const other = JSON.parse(defaultReceiver.requests[0]?.body.toString('utf8') ?? '{}');
    assert.equal(other.event, 'geofence.enter');

    const [record] = (await listDeliveries(h, dwellHook.id)).results;
    assert.equal(record?.event_type, 'geofence.dwell');
    assert.equal(record?.event_id, dwell.eventId);
    assert.equal(record?.status, 'success');
    assert.deepEqual(
      (await listDeliveries(h, defaultHook.id)).results.map((d) => d.event_type),
      ['geofence.enter'],
    );
  });

  test('a PATCH adds geofence.dwell to the default subscription', async () => {
    const updated = expectStatus<{ events: string[] }>(
      await call(h.t, `/webhooks/${defaultHook.id}`, {
        token: h.token,
        method: 'PATCH',
        body: { events: ['geofence.enter', 'geofence.exit', 'geofence.dwell'] },
      }),
      200,
    );
    assert.deepEqual(updated.events, ['geofence.enter', 'geofence.exit', 'geofence.dwell']);
    const source = await eventSource(h, 13.5, 52.6);
    await source.step(true);
    const enter = await latestEnter(h.t, h.token, source.device.id, source.geofence.id);
    await storeDwellEvent(h.t, h.user.workspace.id, enter, 300);
    const before = defaultReceiver.requests.length;
    assert.equal(await deliverDue(h), 3, 'enter and dwell to the default webhook, dwell to the other');
    const events = defaultReceiver.requests
      .slice(before)
      .map((r) => JSON.parse(r.body.toString('utf8')).event)
      .sort();
    assert.deepEqual(events, ['geofence.dwell', 'geofence.enter']);
  });
});
