/**
 * Two app instances on one database, like two nodes behind a load balancer (ADR 007): each keeps
 * its own in-memory index; a write through one node shows in the other's `contains` once the
 * other's check interval has passed (its injected clock is advanced, nothing sleeps), and at once
 * in the writer's own answers. On SQLite the database is a temporary file (an in-memory database
 * cannot be shared), on PostgreSQL one schema used by both apps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { createSharedTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import { circle, containingIds, createGeofence, polygon, rect } from './helpers.ts';

const WINDOW_MS = 250; // the default GEOFENCE_INDEX_CHECK_MS

describe('geofence index consistency across two nodes on one database', () => {
  let shared: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let token: string;

  before(async () => {
    shared = await createSharedTestDatabase();
    a = await startIdentityApp({ database: shared });
    b = await startIdentityApp({ database: shared });
    token = (await signUp(a, 'two-nodes')).tokens.access_token;
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await shared?.drop();
  });

  test('the nodes share the database: a user made on A works on B', async () => {
    expectStatus(await call(b, '/geofences', { token }), 200);
  });

  test('B sees A’s create, move, disable and delete after its check interval', async () => {
    const here = [20.5, 30.5] as const;
    assert.deepEqual(await containingIds(b, { token }, ...here), [], 'B loads the (empty) workspace');

    const g = await createGeofence(a, { token }, { name: 'from A', geometry: polygon(rect(20, 30, 21, 31)) });
    assert.deepEqual(await containingIds(a, { token }, ...here), [g.id], 'A: at once');
    assert.deepEqual(await containingIds(b, { token }, ...here), [], 'B: not yet, within the window');
    b.clock.advance(WINDOW_MS - 1);
    assert.deepEqual(await containingIds(b, { token }, ...here), [], 'B: still within the window');
    b.clock.advance(1);
    assert.deepEqual(await containingIds(b, { token }, ...here), [g.id], 'B: after the window');

    const patch = (body: Record<string, unknown>) =>
      call(a, `/geofences/${g.id}`, { token, method: 'PATCH', body }).then((r) => expectStatus(r, 200));
    await patch({ geometry: circle(25, 35, 1000) });
    b.clock.advance(WINDOW_MS);
    assert.deepEqual(await containingIds(b, { token }, ...here), [], 'B: moved away');
    assert.deepEqual(await containingIds(b, { token }, 25, 35), [g.id], 'B: at its new place');

    await patch({ enabled: false });
    b.clock.advance(WINDOW_MS);
    assert.deepEqual(await containingIds(b, { token }, 25, 35), [], 'B: disabled');
    await patch({ enabled: true });
    b.clock.advance(WINDOW_MS);
    assert.deepEqual(await containingIds(b, { token }, 25, 35), [g.id], 'B: enabled again');

    expectStatus(await call(a, `/geofences/${g.id}`, { token, method: 'DELETE' }), 204);
    b.clock.advance(WINDOW_MS);
    assert.deepEqual(await containingIds(b, { token }, 25, 35), [], 'B: deleted');
  });

  test('and the other way round: A sees B’s writes after its own window', async () => {
    assert.deepEqual(await containingIds(a, { token }, -70.5, -40.5), []);
    const g = await createGeofence(b, { token }, { name: 'from B', geometry: circle(-70.5, -40.5, 5000) });
    assert.deepEqual(await containingIds(b, { token }, -70.5, -40.5), [g.id], 'B: at once');
    a.clock.advance(WINDOW_MS);
    assert.deepEqual(await containingIds(a, { token }, -70.5, -40.5), [g.id], 'A: after its window');
  });

  test('a node’s own write after an unseen remote write shows both at once (the gap forces a reload)', async () => {
    const p = [60.5, 60.5] as const;
    assert.deepEqual(await containingIds(b, { token }, ...p), []);
    const fromA = await createGeofence(
      a,
      { token },
      { name: 'A, unseen by B', geometry: circle(...p, 3000) },
    );
    // Within B's window B has not looked at the counter yet; its own write reveals the gap.
    const fromB = await createGeofence(b, { token }, { name: 'B, own write', geometry: circle(...p, 2000) });
    assert.deepEqual(await containingIds(b, { token }, ...p), [fromA.id, fromB.id].sort());
    const loads = b.deps.geofenceIndexes.stats().find((s) => s.workspaceId === fromB.workspace_id)?.loads;
    assert.ok(loads !== undefined && loads >= 2, `B reloaded the workspace (loads ${loads})`);
  });

  test('writes to geofences that are not indexed (a rename, a disabled create) cost other nodes no reload', async () => {
    const g = await createGeofence(a, { token }, { name: 'stable', geometry: circle(-10.5, -10.5, 3000) });
    b.clock.advance(WINDOW_MS);
    assert.deepEqual(await containingIds(b, { token }, -10.5, -10.5), [g.id]);
    const statsOf = () => b.deps.geofenceIndexes.stats().find((s) => s.workspaceId === g.workspace_id);
    const before = statsOf();
    expectStatus(
      await call(a, `/geofences/${g.id}`, { token, method: 'PATCH', body: { name: 'renamed' } }),
      200,
    );
    await createGeofence(
      a,
      { token },
      { name: 'parked', enabled: false, geometry: circle(-10.5, -10.5, 10) },
    );
    b.clock.advance(WINDOW_MS);
    assert.deepEqual(await containingIds(b, { token }, -10.5, -10.5), [g.id]);
    assert.deepEqual(statsOf(), before, 'same version, no reload');
  });
});
