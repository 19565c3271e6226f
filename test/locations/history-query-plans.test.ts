/**
 * The history queries stay on the indexes made for them, whatever the workspace holds: the page
 * and the total of a device's history (and of a session's) are read through the device (session)
 * index, never through the workspace's (ADR 008, "Storage settings": through the workspace's index
 * a device's total would read every location of the workspace), beside a scan of the few staged
 * rows, in the same statement (ADR 008, "The staged history"). Checked on the plans the database
 * gives for the statements the repository actually runs, so it does not depend on timing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createQueryId, type Kysely } from 'kysely';
import type { DatabaseSchema } from '../../src/db/schema.ts';
import { mergeStagedLocations } from '../../src/locations/history-merge.ts';
import { listLocations } from '../../src/locations/locations.repository.ts';
import type { TestApp } from '../helpers/app.ts';
import { IS_POSTGRES } from '../helpers/database.ts';
import { call, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import { explainQuery, QueryRecorder } from '../helpers/query-plans.ts';
import { type BatchOut, createDevice } from './helpers.ts';

describe('history query plans', () => {
  let t: TestApp;
  let workspaceId: string;
  let deviceId: string;
  let sessionId: string;

  before(async () => {
    t = await startIdentityApp();
    const user = await signUp(t, 'plans');
    const jwt = { token: user.tokens.access_token };
    workspaceId = user.workspace.id;
    deviceId = (await createDevice(t, jwt, { name: 'tracked' })).id;
    sessionId = expectStatus<{ id: string }>(
      await call(t, `/devices/${deviceId}/sessions`, { ...jwt, body: {} }),
      201,
      'start session',
    ).id;
    // Other devices of the same workspace, so that the workspace holds more than the device.
    const locations = Array.from({ length: 60 }, (_, i) => ({
      device_external_id: `other-${i % 6}`,
      coordinates: [10 + i / 100, 20],
    }));
    const res = await call(t, '/locations/batch', { ...jwt, body: { locations } });
    assert.equal(expectStatus<BatchOut>(res, 200, 'batch').accepted, 60);
    const own = await call(t, `/devices/${deviceId}/locations`, { ...jwt, body: { coordinates: [1, 2] } });
    expectStatus(own, 201, 'own location');
    // Merged rows and staged ones: the device's location is merged; single POSTs of other devices
    // stay staged (a batch writes into the per-device history directly).
    await mergeStagedLocations(t.deps.database.db, t.deps.database.capabilities);
    const others = expectStatus<{ results: Array<{ id: string }> }>(
      await call(t, '/devices?limit=10', jwt),
      200,
      'devices',
    );
    for (const other of others.results.filter((d) => d.id !== deviceId)) {
      const res = await call(t, `/devices/${other.id}/locations`, { ...jwt, body: { coordinates: [3, 4] } });
      expectStatus(res, 201, 'staged location');
    }
  });
  after(async () => t?.close());

  /** The plan of each statement `listLocations` runs for these filters, as one line each. */
  async function plans(filters: { deviceId?: string; sessionId?: string }): Promise<string[]> {
    const recorder = new QueryRecorder();
    const db = t.deps.database.db.withPlugin(recorder) as Kysely<DatabaseSchema>;
    const result = await listLocations(db, workspaceId, filters, 0, 50);
    assert.equal(result.total, 1, 'the one location of the device (and session)');
    const dialect = IS_POSTGRES ? 'postgres' : 'sqlite';
    // The recorder sees the subqueries too; the statements run are those no other one contains
    // (PostgreSQL numbers a subquery's parameters from 1 on its own: compared without numbers).
    const compiled = recorder.nodes.map((node) => ({
      node,
      sql: db.getExecutor().compileQuery(node, createQueryId()).sql.replace(/\$\d+/g, '?'),
    }));
    const run = compiled.filter((q) => !compiled.some((o) => o !== q && o.sql.includes(q.sql)));
    const out: string[] = [];
    for (const { node } of run) out.push(await explainQuery(db, dialect, node, { avoidSeqScan: true }));
    return out;
  }

  test("a device's page and total go through the device index", async () => {
    const ran = await plans({ deviceId });
    assert.equal(ran.length, 2, 'one statement for the page, one for the total');
    for (const text of ran) {
      assert.match(text, /locations_device_recorded_idx/, text);
      assert.match(text, /locations_staged/, text);
      assert.doesNotMatch(text, /locations_workspace_received_idx/, text);
    }
  });

  test("a session's page and total go through the session index", async () => {
    const ran = await plans({ sessionId });
    assert.equal(ran.length, 2, 'one statement for the page, one for the total');
    for (const text of ran) {
      assert.match(text, /locations_session_recorded_idx/, text);
      assert.match(text, /locations_staged/, text);
      assert.doesNotMatch(text, /locations_workspace_received_idx/, text);
    }
  });
});
