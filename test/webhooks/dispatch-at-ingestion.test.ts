/**
 * Dispatch at ingestion (ADR 010): the ingestion transaction reads whether the workspace has an
 * enabled webhook; without one, its events' outbox rows are stored already dispatched (to nobody)
 * and the dispatcher has nothing to do for them. With one, the rows wait for the dispatcher.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { drainOutbox } from '../../src/engine.ts';
import { dispatchOutbox } from '../../src/events/outbox-dispatcher.ts';
import { call, expectStatus } from '../helpers/identity.ts';
import { createWebhook, deliveryFixture, eventSource, listDeliveries } from './delivery-helpers.ts';

describe('dispatch at ingestion', () => {
  const fixture = deliveryFixture();

  const outboxOf = async (deviceId: string) => {
    const { rows } = await sql<{ dispatched_at: unknown; created_at: unknown }>`
      select o.dispatched_at, e.created_at from event_outbox o
      join geofence_events e on e.id = o.event_row_id
      where e.device_id = ${deviceId} order by o.id`.execute(fixture.h.t.deps.database.db);
    return rows.map((r) => ({
      dispatchedAt: r.dispatched_at === null ? null : new Date(String(r.dispatched_at)).getTime(),
      createdAt: new Date(String(r.created_at)).getTime(),
    }));
  };
  const dispatcherContext = () => ({
    db: fixture.h.t.deps.database.db,
    capabilities: fixture.h.t.deps.database.capabilities,
    clock: fixture.h.t.clock,
    subscribers: [],
  });

  test('no webhook: the outbox row is stored dispatched, and the dispatcher finds nothing', async () => {
    const source = await eventSource(fixture.h, 5, 5);
    await source.step(true);
    const rows = await outboxOf(source.device.id);
    assert.equal(rows.length, 1, 'the event has its outbox row');
    assert.equal(rows[0]?.dispatchedAt, rows[0]?.createdAt, 'dispatched when stored');
    assert.deepEqual(await dispatchOutbox(dispatcherContext()), { rows: 0, created: {} });
  });

  test('an enabled webhook: the row waits for the dispatcher, which fans it out', async () => {
    const source = await eventSource(fixture.h, 6, 6);
    const hook = await createWebhook(fixture.h, { url: fixture.receiver.url, name: 'enabled' });
    try {
      await source.step(true);
      assert.deepEqual(
        (await outboxOf(source.device.id)).map((r) => r.dispatchedAt),
        [null],
        'pending until dispatched',
      );
      assert.equal((await drainOutbox(fixture.h.t.deps)).deliveries, 1);
      assert.notEqual((await outboxOf(source.device.id))[0]?.dispatchedAt, null);
      assert.equal((await listDeliveries(fixture.h, hook.id)).pagination.total, 1);
    } finally {
      await call(fixture.h.t, `/webhooks/${hook.id}`, { token: fixture.h.token, method: 'DELETE' });
    }
  });

  test('only a disabled webhook: nobody subscribes, so the row is stored dispatched', async () => {
    const source = await eventSource(fixture.h, 7, 7);
    const hook = await createWebhook(fixture.h, {
      url: fixture.receiver.url,
      name: 'disabled',
      enabled: false,
    });
    try {
      await source.step(true);
      const [row] = await outboxOf(source.device.id);
      assert.equal(row?.dispatchedAt, row?.createdAt);
      assert.equal((await drainOutbox(fixture.h.t.deps)).deliveries, 0);
      assert.equal((await listDeliveries(fixture.h, hook.id)).pagination.total, 0);
      // Enabled again: the next event is the webhook's.
      expectStatus(
        await call(fixture.h.t, `/webhooks/${hook.id}`, {
          token: fixture.h.token,
          method: 'PATCH',
          body: { enabled: true },
        }),
        200,
        'enable',
      );
      await source.step(false);
      assert.equal((await drainOutbox(fixture.h.t.deps)).deliveries, 1);
      const deliveries = await listDeliveries(fixture.h, hook.id);
      assert.deepEqual(
        deliveries.results.map((d) => d.event_type),
        ['geofence.exit'],
      );
    } finally {
      await call(fixture.h.t, `/webhooks/${hook.id}`, { token: fixture.h.token, method: 'DELETE' });
    }
  });
});
