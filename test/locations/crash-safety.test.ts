/**
 * Crash safety (contract §4.3): a location, its events, their outbox rows, the usage counter and
 * the device's new state commit together or not at all. A trigger that fails the usage-counter
 * write (the transaction's last statement, after the events and outbox rows are written) stands in
 * for a crash at the worst moment.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { eventUsage, usagePeriod } from '../../src/usage/usage.repository.ts';
import { createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { IS_POSTGRES } from '../helpers/database.ts';
import { call, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import {
  type BatchOut,
  createDevice,
  type EventOut,
  getDevice,
  type LocationOut,
  postLocation,
} from './helpers.ts';

describe('crash safety of the location transaction', () => {
  let t: TestApp;
  let jwt: { token: string };
  let workspaceId: string;

  before(async () => {
    t = await startIdentityApp();
    const owner = await signUp(t, 'crash');
    jwt = { token: owner.tokens.access_token };
    workspaceId = owner.workspace.id;
    await createGeofence(t, jwt, { name: 'F', geometry: polygon(rect(1, 1, 1.01, 1.01)) });
  });
  after(async () => t?.close());

  const db = () => t.deps.database.db;

  async function failUsageWrites(): Promise<void> {
    if (IS_POSTGRES) {
      await sql`create function fail_usage() returns trigger language plpgsql as $$
        begin raise exception 'injected failure'; end $$`.execute(db());
      await sql`create trigger fail_usage before insert or update on usage_counters
        for each row execute function fail_usage()`.execute(db());
    } else {
      await sql`create trigger fail_usage_insert before insert on usage_counters
        begin select raise(abort, 'injected failure'); end`.execute(db());
      await sql`create trigger fail_usage_update before update on usage_counters
        begin select raise(abort, 'injected failure'); end`.execute(db());
    }
  }

  async function allowUsageWrites(): Promise<void> {
    if (IS_POSTGRES) {
      await sql`drop trigger fail_usage on usage_counters`.execute(db());
      await sql`drop function fail_usage()`.execute(db());
    } else {
      await sql`drop trigger fail_usage_insert`.execute(db());
      await sql`drop trigger fail_usage_update`.execute(db());
    }
  }

  async function counts(): Promise<{ locations: number; events: number; outbox: number }> {
    const count = async (table: 'locations' | 'geofence_events' | 'event_outbox') =>
      Number(
        (
          await db()
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('workspace_id', '=', workspaceId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    return {
      locations: await count('locations'),
      events: await count('geofence_events'),
      outbox: await count('event_outbox'),
    };
  }

  test('a failure after the events are written leaves nothing behind, single and batch', async () => {
    const device = await createDevice(t, jwt);
    const before = await getDevice(t, jwt, device.id);
    const countsBefore = await counts();
    await failUsageWrites();
    try {
      const res = await call(t, `/devices/${device.id}/locations`, {
        ...jwt,
        body: { coordinates: [1.005, 1.005] },
      });
      assert.equal(res.statusCode, 500, res.body);
      const batch = await call(t, '/locations/batch', {
        ...jwt,
        body: {
          locations: [
            { device_id: device.id, coordinates: [1.005, 1.005] },
            { device_external_id: 'crash-new', coordinates: [1.005, 1.005] },
          ],
        },
      });
      assert.equal(batch.statusCode, 500, batch.body);
    } finally {
      await allowUsageWrites();
    }
    assert.deepEqual(await counts(), countsBefore, 'no location, no event, no outbox row');
    assert.deepEqual(await getDevice(t, jwt, device.id), before, 'device state unchanged');
    assert.equal(await eventUsage(db(), workspaceId, usagePeriod(t.clock.now())), 0);
    const history = expectStatus<Page<LocationOut>>(
      await call(t, `/devices/${device.id}/locations`, jwt),
      200,
    );
    assert.equal(history.pagination.total, 0);
    // The batch's unknown external id was created before the failed ingestion (idempotently, in its
    // own transaction): the device exists, untouched by the failed locations.
    const created = expectStatus<Page<{ last_location: unknown; inside_geofence_ids: string[] }>>(
      await call(t, '/devices', { ...jwt, query: { external_id: 'crash-new' } }),
      200,
    );
    assert.deepEqual(
      created.results.map((d) => [d.last_location, d.inside_geofence_ids]),
      [[null, []]],
    );

    // The same requests succeed once the failure is gone.
    const ok = await postLocation(t, jwt, device.id, { coordinates: [1.005, 1.005] });
    assert.equal(ok.events.length, 1);
    const batch = expectStatus<BatchOut>(
      await call(t, '/locations/batch', {
        ...jwt,
        body: {
          locations: [
            { device_id: device.id, coordinates: [0.99, 1.005] },
            { device_external_id: 'crash-new', coordinates: [1.005, 1.005] },
          ],
        },
      }),
      200,
    );
    assert.deepEqual(batch.events.map((e: EventOut) => e.event_type).sort(), ['enter', 'exit']);
    assert.equal(await eventUsage(db(), workspaceId, usagePeriod(t.clock.now())), 3);
  });

  test('every committed event has exactly one outbox row, written with it', async () => {
    const rows = await db()
      .selectFrom('geofence_events as e')
      .leftJoin('event_outbox as o', 'o.event_row_id', 'e.id')
      .select([
        'e.id as eventId',
        'o.id as outboxId',
        'o.dispatched_at as dispatchedAt',
        'o.workspace_id as ws',
      ])
      .where('e.workspace_id', '=', workspaceId)
      .execute();
    assert.ok(rows.length >= 3, `events: ${rows.length}`);
    const perEvent = new Map<string, number>();
    for (const row of rows) {
      assert.ok(row.outboxId, `event ${row.eventId} has an outbox row`);
      // The workspace has no webhook: its rows are stored dispatched, to nobody (ADR 010).
      assert.notEqual(row.dispatchedAt, null, 'dispatched as stored');
      assert.equal(row.ws, workspaceId);
      perEvent.set(row.eventId, (perEvent.get(row.eventId) ?? 0) + 1);
    }
    assert.deepEqual([...new Set(perEvent.values())], [1]);
  });
});
