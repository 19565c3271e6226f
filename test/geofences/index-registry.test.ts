/**
 * GeofenceIndexRegistry in isolation (ADR 007). Node A is a test app writing through HTTP; node B
 * is a second registry over the same database with its own clock, so the version counter, the
 * check interval and the order in which commit reports arrive can be controlled exactly.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { GeofenceIndexRegistry } from '../../src/geofences/geofence-index-registry.ts';
import { readIndexVersion } from '../../src/geofences/geofences.repository.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type SignedUpUser, signUp, startIdentityApp } from '../helpers/identity.ts';
import { circle, createGeofence, type GeofenceOut } from './helpers.ts';

describe('GeofenceIndexRegistry', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let ws: string;
  let clock: ManualClock;
  let nodeB: GeofenceIndexRegistry;

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'registry');
    ws = owner.workspace.id;
  });
  after(async () => t?.close());
  beforeEach(() => {
    clock = new ManualClock('2026-03-10T12:00:00.000Z');
    nodeB = new GeofenceIndexRegistry({ db: t.deps.database.db, clock, checkIntervalMs: 100 });
  });

  const token = () => ({ token: owner.tokens.access_token });
  const version = () => readIndexVersion(t.deps.database.db, ws);
  const loadsOf = (r: GeofenceIndexRegistry) => r.stats().find((s) => s.workspaceId === ws)?.loads ?? 0;
  const create = (name: string, lng: number, lat: number, extra: Record<string, unknown> = {}) =>
    createGeofence(t, token(), { name, geometry: circle(lng, lat, 1000), ...extra });
  const patch = async (id: string, body: Record<string, unknown>) =>
    expectStatus<GeofenceOut>(await call(t, `/geofences/${id}`, { ...token(), method: 'PATCH', body }), 200);

  test('loads lazily, once for concurrent first queries, enabled geofences only', async () => {
    const on = await create('on', 1, 1);
    await create('off', 1, 1, { enabled: false });
    assert.deepEqual(nodeB.stats(), [], 'nothing loaded before the first query');
    const answers = await Promise.all(Array.from({ length: 5 }, () => nodeB.query(ws, 1, 1)));
    for (const ids of answers) assert.deepEqual(ids, [on.id]);
    assert.equal(loadsOf(nodeB), 1, 'one shared load');
    assert.deepEqual(await nodeB.query('no-such-workspace', 1, 1), []);
  });

  test('re-reads the counter once per interval; reloads only when it moved', async () => {
    await nodeB.query(ws, 2, 2);
    const g = await create('later', 2, 2);
    clock.advance(99);
    assert.deepEqual(await nodeB.query(ws, 2, 2), [], 'within the interval: stale by design');
    clock.advance(1);
    assert.deepEqual(await nodeB.query(ws, 2, 2), [g.id]);
    assert.equal(loadsOf(nodeB), 2);
    clock.advance(100);
    await nodeB.query(ws, 2, 2);
    assert.equal(loadsOf(nodeB), 2, 'counter unchanged: no reload');
    // A clock stepping backwards checks instead of freezing the index.
    await patch(g.id, { enabled: false });
    clock.advance(-1000);
    assert.deepEqual(await nodeB.query(ws, 2, 2), []);
  });

  test('commit reports arriving out of order are applied in version order, without a reload', async () => {
    await nodeB.query(ws, 3, 3);
    const p = await create('p', 3, 3);
    const vp = await version();
    const q = await create('q', 3, 3);
    const vq = await version();
    // As if B had made both writes and the second one's report came first.
    nodeB.applyCommitted(ws, vq, { kind: 'upsert', id: q.id, geometry: q.geometry });
    nodeB.applyCommitted(ws, vp, { kind: 'upsert', id: p.id, geometry: p.geometry });
    assert.deepEqual((await nodeB.query(ws, 3, 3)).sort(), [p.id, q.id].sort());
    assert.equal(loadsOf(nodeB), 1);

    // Two moves of one geofence, reported newest first: the newest geometry wins.
    await patch(p.id, { geometry: circle(4, 4, 1000) });
    const v1 = await version();
    await patch(p.id, { geometry: circle(5, 5, 1000) });
    const v2 = await version();
    nodeB.applyCommitted(ws, v2, { kind: 'upsert', id: p.id, geometry: circle(5, 5, 1000) });
    nodeB.applyCommitted(ws, v1, { kind: 'upsert', id: p.id, geometry: circle(4, 4, 1000) });
    assert.deepEqual(await nodeB.query(ws, 5, 5), [p.id]);
    assert.deepEqual(await nodeB.query(ws, 4, 4), []);
    assert.equal(loadsOf(nodeB), 1, 'still no reload');
  });

  test('a report behind a gap (another node’s write) makes the next query reload at once', async () => {
    await nodeB.query(ws, 6, 6);
    const remote = await create('remote', 6, 6); // B never hears of this one
    const own = await create('own', 6, 6);
    nodeB.applyCommitted(ws, await version(), { kind: 'upsert', id: own.id, geometry: own.geometry });
    assert.deepEqual(
      (await nodeB.query(ws, 6, 6)).sort(),
      [remote.id, own.id].sort(),
      'no clock advance needed',
    );
    assert.equal(loadsOf(nodeB), 2);
  });

  test('reports for a workspace never queried here are ignored; too many behind a gap drop the index', async () => {
    nodeB.applyCommitted('elsewhere', 5, { kind: 'remove', id: 'x' });
    assert.deepEqual(nodeB.stats(), []);

    await nodeB.query(ws, 7, 7);
    const base = (await version()) + 1; // this version stays missing: a gap
    const g = await create('gap', 7, 7);
    for (let i = 1; i <= 65; i++)
      nodeB.applyCommitted(ws, base + i, { kind: 'upsert', id: g.id, geometry: g.geometry });
    assert.deepEqual(nodeB.stats(), [], 'the buffer overflowed: index dropped');
    assert.deepEqual(await nodeB.query(ws, 7, 7), [g.id], 'reloaded from storage');
  });

  test('idle workspaces are evicted after idleEvictMs without a query and reloaded lazily', async () => {
    const idleClock = new ManualClock('2026-03-10T12:00:00.000Z');
    const registry = new GeofenceIndexRegistry({
      db: t.deps.database.db,
      clock: idleClock,
      checkIntervalMs: 100,
      idleEvictMs: 1000,
    });
    const g = await create('idle', 11, 11);
    const other = await signUp(t, 'registry-idle');
    await registry.query(ws, 11, 11);
    await registry.query(other.workspace.id, 11, 11);
    const loaded = () =>
      registry
        .stats()
        .map((s) => s.workspaceId)
        .sort();
    assert.deepEqual(loaded(), [ws, other.workspace.id].sort());
    idleClock.advance(600);
    await registry.query(ws, 11, 11); // ws used again; the other one stays idle
    idleClock.advance(600);
    await registry.query(ws, 11, 11);
    assert.deepEqual(loaded(), [ws], 'idle for 1200 ms ≥ 1000: evicted');
    idleClock.advance(999);
    await registry.query(other.workspace.id, 11, 11);
    assert.deepEqual(loaded(), [ws, other.workspace.id].sort(), 'ws idle 999 ms: kept');
    // Sweeps run at most every idleEvictMs / 4 (250 ms): ws, idle since 1200, goes at the next one.
    idleClock.advance(249);
    await registry.query(other.workspace.id, 11, 11);
    assert.deepEqual(loaded(), [ws, other.workspace.id].sort(), 'no sweep within 250 ms of the last');
    idleClock.advance(1);
    assert.deepEqual(await registry.query(other.workspace.id, 11, 11), []);
    assert.deepEqual(loaded(), [other.workspace.id], 'ws idle 1249 ms: evicted');
    // Evicted state is gone entirely: a commit report for it is ignored, the next query reloads.
    registry.applyCommitted(ws, (await version()) + 1, { kind: 'remove', id: g.id });
    assert.deepEqual(await registry.query(ws, 11, 11), [g.id]);
    assert.equal(loadsOf(registry), 1, 'a fresh state: its first load');
    // Without idleEvictMs nothing is evicted, however long the pause.
    await nodeB.query(ws, 11, 11);
    clock.advance(365 * 24 * 3600_000);
    await nodeB.query(other.workspace.id, 11, 11);
    assert.equal(nodeB.stats().length, 2);
  });

  test('deleting a workspace drops its index on the node that deleted it', async () => {
    const doomed = await signUp(t, 'registry-delete');
    const wsId = doomed.workspace.id;
    const auth = { token: doomed.tokens.access_token };
    await createGeofence(t, auth, { name: 'doomed', geometry: circle(12, 12, 1000) });
    const registry = t.deps.geofenceIndexes;
    assert.equal((await registry.query(wsId, 12, 12)).length, 1);
    assert.ok(registry.stats().some((s) => s.workspaceId === wsId));
    await expectStatus(await call(t, `/workspaces/${wsId}`, { ...auth, method: 'DELETE' }), 204);
    assert.equal(
      registry.stats().some((s) => s.workspaceId === wsId),
      false,
    );
    assert.deepEqual(await registry.query(wsId, 12, 12), [], 'reloads an empty workspace, if asked');
  });

  test('forget() drops a workspace; the next query loads it again', async () => {
    await nodeB.query(ws, 8, 8);
    nodeB.forget(ws);
    assert.deepEqual(nodeB.stats(), []);
    await nodeB.query(ws, 8, 8);
    assert.equal(loadsOf(nodeB), 1);
  });
});
