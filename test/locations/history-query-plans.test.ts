/**
 * The history queries stay on the indexes made for them, whatever the workspace holds: the page
 * and the total of a device's history (and of a session's) are read through the device (session)
 * index, never through the workspace's (ADR 008, "Storage settings": through the workspace's index
 * a device's total would read every location of the workspace). Checked on the plans the
 * database gives for the statements the repository actually runs, so it does not depend on timing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../../src/db/schema.ts';
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
  });
  after(async () => t?.close());

  /** The plan of each statement `listLocations` runs for these filters, as one line each. */
  async function plans(filters: { deviceId?: string; sessionId?: string }): Promise<string[]> {
    const recorder = new QueryRecorder();
    const db = t.deps.database.db.withPlugin(recorder) as Kysely<DatabaseSchema>;
    const result = await listLocations(db, workspaceId, filters, 0, 50);
    assert.equal(result.total, 1, 'the one location of the device (and session)');
    const dialect = IS_POSTGRES ? 'postgres' : 'sqlite';
    const out: string[] = [];
    for (const node of recorder.nodes)
      out.push(await explainQuery(db, dialect, node, { avoidSeqScan: true }));
    return out;
  }

  test("a device's page and total go through the device index", async () => {
    const [page, count] = await plans({ deviceId });
    assert.match(page ?? '', /locations_device_recorded_idx/);
    assert.match(count ?? '', /locations_device_recorded_idx/);
    assert.doesNotMatch(count ?? '', /locations_workspace_received_idx/);
  });

  test("a session's page and total go through the session index", async () => {
    const [page, count] = await plans({ sessionId });
    assert.match(page ?? '', /locations_session_recorded_idx/);
    assert.match(count ?? '', /locations_session_recorded_idx/);
    assert.doesNotMatch(count ?? '', /locations_workspace_received_idx/);
  });
});
