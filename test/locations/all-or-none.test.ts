/**
 * `ingestLocations(…, { allOrNone: true })` (a tracker's batch, ADR 021): an item whose device is
 * missing fails the whole transaction, so no other item of the request is stored; without the
 * option the others are stored and the missing device is reported beside them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type IngestContext, ingestLocations } from '../../src/locations/ingest.service.ts';
import { parseLocation } from '../../src/locations/location-input.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { call, expectStatus, signUp } from '../helpers/identity.ts';

describe('ingestLocations all or none', () => {
  let t: TestApp;
  let ctx: IngestContext;
  let workspaceId: string;
  let deviceId: string;
  let token: string;

  before(async () => {
    t = await startTestApp();
    ctx = {
      db: t.deps.database.db,
      clock: t.clock,
      registry: t.deps.geofenceIndexes,
      capabilities: t.deps.database.capabilities,
    };
    const owner = await signUp(t, 'all-or-none');
    workspaceId = owner.workspace.id;
    token = owner.tokens.access_token;
    deviceId = expectStatus<{ id: string }>(
      await call(t, '/devices', { token, body: { name: 'phone' } }),
      201,
    ).id;
  });
  after(async () => t?.close());

  const item = (ref: number, device: string) => {
    const parsed = parseLocation({ coordinates: [7, 45 + ref / 1000] }, t.clock.now(), []);
    assert.ok(parsed.ok);
    return { ref, deviceId: device, location: parsed.location };
  };
  const stored = async () =>
    expectStatus<{ pagination: { total: number } }>(
      await call(t, `/devices/${deviceId}/locations`, { token }),
      200,
    ).pagination.total;

  test('a missing device fails the request: nothing of it is stored', async () => {
    await assert.rejects(
      ingestLocations(ctx, workspaceId, [item(0, deviceId), item(1, 'no-such-device')], { allOrNone: true }),
      /Device not found/,
    );
    assert.equal(await stored(), 0);
  });

  test('without the option the other items are stored and the missing device reported', async () => {
    const result = await ingestLocations(ctx, workspaceId, [item(0, deviceId), item(1, 'no-such-device')]);
    assert.deepEqual(result.missingDevice, [1]);
    assert.equal(result.stored.size, 1);
    assert.equal(await stored(), 1);
  });
});
