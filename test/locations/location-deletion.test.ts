/**
 * A device's locations go with the device, and with its workspace (contract §4.1). Since migration
 * 0007 this is an `AFTER DELETE` trigger on `devices` rather than a foreign key on
 * `locations.device_id` (ADR 008, "Batch speed"): these tests pin that both ways of deleting a
 * device still clear its history, and nothing else's, on either dialect. Its staged locations
 * (ADR 008, "The staged history") are dropped by the next merge instead, which is what a history
 * reader, the merge's caller here, sees at once anyway: they belong to no device it can name.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mergeStagedLocations } from '../../src/locations/history-merge.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, login, signUp, startIdentityApp } from '../helpers/identity.ts';
import { type BatchOut, createDevice } from './helpers.ts';

describe('locations are deleted with their device and their workspace', () => {
  let t: TestApp;

  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  /** Locations stored for these owners, after a merge: merged ones and any left staged. */
  async function storedLocations(where: { workspaceId?: string; deviceId?: string }): Promise<number> {
    const { db, capabilities } = t.deps.database;
    await mergeStagedLocations(db, capabilities);
    let n = 0;
    for (const table of ['locations', 'locations_staged'] as const) {
      let query = db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n'));
      if (where.workspaceId) query = query.where('workspace_id', '=', where.workspaceId);
      if (where.deviceId) query = query.where('device_id', '=', where.deviceId);
      n += Number((await query.executeTakeFirstOrThrow()).n);
    }
    return n;
  }

  async function newestRows(deviceId: string): Promise<number> {
    const rows = await t.deps.database.db
      .selectFrom('device_last_locations')
      .select('device_id')
      .where('device_id', '=', deviceId)
      .execute();
    return rows.length;
  }

  async function record(token: string, externalIds: string[]): Promise<void> {
    const locations = externalIds.flatMap((id) =>
      [0, 1, 2].map((i) => ({ device_external_id: id, coordinates: [10 + i, 20] })),
    );
    const res = await call(t, '/locations/batch', { token, body: { locations } });
    assert.equal(expectStatus<BatchOut>(res, 200, 'batch').accepted, locations.length);
  }

  test('DELETE /devices/{id} and DELETE /workspaces/{id} clear exactly their locations', async () => {
    const owner = await signUp(t, 'deletion');
    const keepToken = owner.tokens.access_token;
    const keepWorkspace = owner.workspace.id;
    const created = expectStatus<{ id: string }>(
      await call(t, '/workspaces', { token: keepToken, body: { name: 'to be deleted' } }),
      201,
      'create workspace',
    );
    const goneToken = (await login(t, owner.email, owner.password, { workspaceId: created.id })).access_token;

    await record(keepToken, ['a', 'b']);
    await record(goneToken, ['c', 'd']);
    const device = await createDevice(t, { token: goneToken }, { name: 'e', external_id: 'e' });
    await record(goneToken, ['e']);
    assert.equal(await storedLocations({ workspaceId: keepWorkspace }), 6);
    assert.equal(await storedLocations({ workspaceId: created.id }), 9);

    // Its batch went into the per-device history; single POSTs stay staged until it goes.
    assert.equal(await newestRows(device.id), 1);
    for (const lng of [20, 21, 22]) {
      const res = await call(t, `/devices/${device.id}/locations`, {
        token: goneToken,
        body: { coordinates: [lng, 20] },
      });
      expectStatus(res, 201, 'staged location');
    }
    assert.equal(
      Number(
        (
          await t.deps.database.db
            .selectFrom('locations_staged')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('device_id', '=', device.id)
            .executeTakeFirstOrThrow()
        ).n,
      ),
      3,
      'staged when the device goes',
    );
    expectStatus(await call(t, `/devices/${device.id}`, { token: goneToken, method: 'DELETE' }), 204);
    assert.equal(await storedLocations({ deviceId: device.id }), 0, 'the device’s locations went with it');
    assert.equal(await newestRows(device.id), 0, 'and its newest-location row');
    assert.equal(await storedLocations({ workspaceId: created.id }), 6, 'its workspace’s others stayed');

    expectStatus(await call(t, `/workspaces/${created.id}`, { token: goneToken, method: 'DELETE' }), 204);
    assert.equal(await storedLocations({ workspaceId: created.id }), 0, 'the workspace’s locations went');
    assert.equal(await storedLocations({ workspaceId: keepWorkspace }), 6, 'another workspace’s stayed');
  });
});
