import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createDwellWorker } from '../../src/webhooks/webhook-engine.ts';
import { circle, createGeofence } from '../geofences/helpers.ts';
import { call, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';

describe('dwell smoke', () => {
  test('dwell fires at the exact time; not after an exit', async () => {
    const t = await startIdentityApp();
    try {
      const user = await signUp(t, 'dwell');
      const token = user.tokens.access_token;
      const fence = await createGeofence(t, { token }, {
        name: 'Depot',
        geometry: circle(13.4, 52.5, 200),
        dwell_seconds: 300,
      } as never);
      console.log('fence', JSON.stringify(fence));
      const device = expectStatus<{ id: string }>(
        await call(t, '/devices', { token, body: { name: 'truck' } }),
        201,
      );
      const t0 = t.clock.now();
      const post = async (inside: boolean, at: Date) =>
        expectStatus<{ events: unknown[] }>(
          await call(t, `/devices/${device.id}/locations`, {
            token,
            body: { coordinates: inside ? [13.4, 52.5] : [14.4, 52.5], timestamp: at.toISOString() },
          }),
          201,
        );
      console.log(JSON.stringify(await post(true, t0)));
      const worker = createDwellWorker(t.deps);
      t.clock.advance(299_000);
      assert.equal(await worker.runOnce(), 0);
      t.clock.advance(1000);
      assert.equal(await worker.runOnce(), 1);
      assert.equal(await worker.runOnce(), 0);
      const events = expectStatus<{
        results: Array<{ event_type: string; event_id: string; occurred_at: string }>;
      }>(await call(t, '/events', { token }), 200);
      console.log(JSON.stringify(events.results.map((e) => [e.event_type, e.event_id, e.occurred_at])));
      // exit before the dwell of a second visit
      await post(false, new Date(t.clock.now().getTime()));
      await post(true, new Date(t.clock.now().getTime() + 1000));
      const exitAt = new Date(t.clock.now().getTime() + 60_000);
      console.log(JSON.stringify(await post(false, exitAt)));
      t.clock.advance(3_600_000);
      assert.equal(await worker.runOnce(), 0);
      // a device that reports past the dwell moment: ingestion fires it first
      await post(true, new Date(t.clock.now().getTime()));
      const res = await post(false, new Date(t.clock.now().getTime() + 400_000));
      console.log(JSON.stringify(res));
    } finally {
      await t.close();
    }
  });
});
