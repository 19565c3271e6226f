/**
 * A stored `dwell` event through the read side of /events (contract §4.5): the `event_type=dwell`
 * filter, the record (`event: "geofence.dwell"`, seed §6.3 id of the dwell moment, the visit's
 * point and location), its place in the newest-first order, and the OpenAPI enums that list it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { circle, createGeofence } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  expectStatus,
  type Page,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { servedDocument } from '../helpers/openapi.ts';
import { type EventOut, latestEnter, storeDwellEvent } from './dwell-event.ts';

describe('dwell events in GET /events', () => {
  let t: TestApp;
  let user: SignedUpUser;
  let enter: EventOut;
  let dwellId: string;

  const list = async (query: Record<string, string>) =>
    expectStatus<Page<EventOut>>(
      await call(t, '/events', { token: user.tokens.access_token, query }),
      200,
      `GET /events ${JSON.stringify(query)}`,
    );

  before(async () => {
    t = await startIdentityApp();
    user = await signUp(t, 'dwell-events');
    const token = { token: user.tokens.access_token };
    const geofence = await createGeofence(t, token, {
      name: 'Yard',
      geometry: circle(8, 48, 200),
      dwell_seconds: 600,
    });
    const device = expectStatus<{ id: string }>(
      await call(t, '/devices', { ...token, body: { name: 'forklift', user_id: 'op-3' } }),
      201,
    );
    expectStatus(
      await call(t, `/devices/${device.id}/locations`, {
        ...token,
        body: {
          coordinates: [8, 48],
          timestamp: new Date(t.clock.now().getTime() - 3_600_000).toISOString(),
          metadata: { shift: 'early' },
        },
      }),
      201,
    );
    enter = await latestEnter(t, user.tokens.access_token, device.id, geofence.id);
    dwellId = (await storeDwellEvent(t, user.workspace.id, enter, 600)).id;
  });
  after(async () => t.close());

  test('event_type=dwell answers the dwell alone, with its record', async () => {
    const page = await list({ event_type: 'dwell' });
    assert.deepEqual(page.pagination, { total: 1, limit: 50, offset: 0, has_more: false });
    const dwell = page.results[0];
    const dwellAt = new Date(Date.parse(enter.occurred_at) + 600_000);
    assert.deepEqual(dwell, {
      ...enter,
      id: dwellId,
      event_type: 'dwell',
      event: 'geofence.dwell',
      event_id: `${enter.geofence_id}_dwell_${Math.floor(dwellAt.getTime() / 1000)}`,
      occurred_at: dwellAt.toISOString(),
      created_at: dwell?.created_at,
    });
    assert.deepEqual(dwell?.point, enter.point, "the visit's last known point");
    assert.equal(dwell?.location_id, enter.location_id, "the visit's last location");
    assert.deepEqual(
      expectStatus<EventOut>(await call(t, `/events/${dwellId}`, { token: user.tokens.access_token }), 200),
      dwell,
    );
  });

  test('the other filters leave it out or take it in; newest first puts it before its enter', async () => {
    assert.deepEqual(
      (await list({ event_type: 'enter' })).results.map((e) => e.id),
      [enter.id],
    );
    assert.deepEqual(
      (await list({})).results.map((e) => e.event_type),
      ['dwell', 'enter'],
    );
    assert.deepEqual(
      (
        await list({ geofence_id: enter.geofence_id, device_id: enter.device_id, event_type: 'dwell' })
      ).results.map((e) => e.id),
      [dwellId],
    );
    assert.equal((await list({ event_type: 'exit' })).pagination.total, 0);
  });

  test('the OpenAPI document lists dwell in the filter and in the record', async () => {
    const document = await servedDocument(t);
    const listing = document.paths['/api/v1/events']?.get as unknown as {
      parameters: Array<{ name: string; schema: { enum?: string[] } }>;
    };
    const parameters = listing.parameters;
    const filter = parameters.find((p) => p.name === 'event_type');
    assert.deepEqual(filter?.schema.enum, ['enter', 'exit', 'dwell']);
    const record = document.components.schemas.Event as {
      properties: { event_type: { enum: string[] }; event: { enum: string[] } };
    };
    assert.deepEqual(record.properties.event_type.enum, ['enter', 'exit', 'dwell']);
    assert.deepEqual(record.properties.event.enum, ['geofence.enter', 'geofence.exit', 'geofence.dwell']);
  });
});
