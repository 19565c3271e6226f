/**
 * GET /geofences/export (contract §3): the workspace's geofences as one GeoJSON FeatureCollection
 * (application/geo+json), each record's fields where the documented schema puts them, oldest first;
 * the list's `enabled` and `q` filters; the round trip export → delete all → POST /geofences/batch
 * → export, equal apart from ids and timestamps; and the time for 5,000 geofences.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { exportGeofences } from '../../src/geofences/geofences.service.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type SignedUpUser, signUp, startIdentityApp } from '../helpers/identity.ts';
import { documentedOperations, SchemaValidator, servedDocument } from '../helpers/openapi.ts';
import {
  batch,
  batchPlans,
  exportAll,
  type FeatureCollectionOut,
  type FeatureOut,
  featureOf,
  StatementCounter,
} from './batch-helpers.ts';
import { circle, createGeofence, type GeofenceOut, lcg, polygon, rect, starRing } from './helpers.ts';

describe('GET /geofences/export', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let jwt: { token: string };
  /** The geofences of the owner's workspace, oldest first. */
  const made: GeofenceOut[] = [];

  before(async () => {
    t = await startIdentityApp({ env: { PLANS_FILE: batchPlans() } });
    owner = await signUp(t, 'export');
    jwt = { token: owner.tokens.access_token };
  });
  after(async () => t?.close());

  const listAll = async (query: Record<string, string> = {}): Promise<GeofenceOut[]> =>
    expectStatus<{ results: GeofenceOut[] }>(
      await call(t, '/geofences', { ...jwt, query: { limit: '200', ...query } }),
      200,
    ).results;

  test('an empty workspace: an empty FeatureCollection, as application/geo+json', async () => {
    const res = await call(t, '/geofences/export', jwt);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/geo+json');
    assert.deepEqual(res.json(), { type: 'FeatureCollection', features: [] });
  });

  test('every geofence as a Feature, oldest first, as the OpenAPI document describes it', async () => {
    const bodies: Array<Record<string, unknown>> = [
      {
        name: 'Yard with a hole',
        description: 'the office is not the yard',
        external_id: 'yard',
        geometry: polygon(rect(13.3, 52.4, 13.5, 52.6), rect(13.35, 52.45, 13.4, 52.5).reverse()),
        metadata: { 'line\nbreak': true, nested: { list: [1, 'two', null] }, ключ: 'значение' },
      },
      {
        name: 'Gate 🚚',
        geometry: circle(13.4, 52.5, 250),
        dwell_seconds: 300,
        exit_buffer_m: 15,
        max_accuracy_m: 80,
      },
      { name: 'Dateline port', external_id: 'fiji', geometry: circle(179.999, -17, 5000) },
      { name: 'Closed depot', enabled: false, geometry: polygon(rect(2.3, 48.8, 2.4, 48.9)) },
    ];
    for (const body of bodies) {
      made.push(await createGeofence(t, jwt, body));
      t.clock.advance(1000);
    }
    const res = await call(t, '/geofences/export', jwt);
    assert.equal(res.headers['content-type'], 'application/geo+json');
    const exported = expectStatus<FeatureCollectionOut>(res, 200);
    assert.deepEqual(exported, {
      type: 'FeatureCollection',
      features: made.map((g) => featureOf(g as GeofenceOut & Record<string, unknown>)),
    });
    const dateline = exported.features[2] as FeatureOut;
    assert.ok(
      (dateline.bbox[0] as number) > (dateline.bbox[2] as number),
      'west > east across the antimeridian',
    );
    assert.deepEqual(Object.keys(exported.features[1]?.properties ?? {}).sort(), [
      'created_at',
      'description',
      'dwell_seconds',
      'enabled',
      'exit_buffer_m',
      'external_id',
      'max_accuracy_m',
      'metadata',
      'name',
      'updated_at',
    ]);

    const document = await servedDocument(t);
    const operation = (await documentedOperations(document)).find(
      (op) => op.label === 'GET /api/v1/geofences/export',
    );
    const schema = operation?.operation.responses['200']?.content?.['application/geo+json']?.schema;
    assert.ok(schema, 'the document describes the application/geo+json answer');
    assert.equal(new SchemaValidator().errors(schema, exported), '');
  });

  test('filters: enabled and q, as the list has them', async () => {
    const ids = (collection: FeatureCollectionOut) => collection.features.map((f) => f.id);
    const listed = async (query: Record<string, string>) => (await listAll(query)).map((g) => g.id).reverse();
    const queries: Array<Record<string, string>> = [
      { enabled: 'true' },
      { enabled: 'false' },
      { q: 'GATE' },
      { q: 'e', enabled: 'true' },
    ];
    for (const query of queries) {
      assert.deepEqual(ids(await exportAll(t, jwt, query)), await listed(query), JSON.stringify(query));
    }
    assert.deepEqual(ids(await exportAll(t, jwt, { q: 'nothing like it' })), []);
    const bad = await call(t, '/geofences/export', { ...jwt, query: { enabled: 'maybe' } });
    assert.equal(bad.statusCode, 422);
  });

  test('round trip: export, delete all, import the export through /batch, export again: equal but ids and times', async () => {
    const before = await call(t, '/geofences/export', jwt);
    const first = expectStatus<FeatureCollectionOut>(before, 200);
    assert.equal(first.features.length, made.length);

    // Re-imported as it is, over the existing set: external ids match (and change nothing), the
    // others are new.
    t.clock.advance(60_000);
    const over = await batch(t, jwt, first);
    assert.deepEqual(over.rejected, []);
    assert.deepEqual(
      over.updated.map((g) => g.id),
      made.filter((g) => g.external_id !== null).map((g) => g.id),
    );
    assert.deepEqual(
      over.updated.map((g) => g.updated_at),
      made.filter((g) => g.external_id !== null).map((g) => g.updated_at),
      'unchanged: updated_at stays',
    );
    assert.equal(over.created.length, made.filter((g) => g.external_id === null).length);

    for (const g of await listAll()) {
      expectStatus(await call(t, `/geofences/${g.id}`, { ...jwt, method: 'DELETE' }), 204);
    }
    assert.deepEqual((await exportAll(t, jwt)).features, []);

    t.clock.advance(60_000);
    // The export's text exactly as it was answered.
    const imported = await call(t, '/geofences/batch', {
      ...jwt,
      headers: { 'content-type': 'application/json' },
      body: before.body,
    });
    const result = expectStatus<{ created: GeofenceOut[]; rejected: unknown[] }>(imported, 200);
    assert.deepEqual(result.rejected, []);
    assert.equal(result.created.length, first.features.length);

    const second = await exportAll(t, jwt);
    const strip = (f: FeatureOut) => {
      const { created_at: _c, updated_at: _u, ...properties } = f.properties;
      return { ...f, id: undefined, properties };
    };
    assert.deepEqual(second.features.map(strip), first.features.map(strip));
    assert.ok(
      second.features.every((f, i) => f.id !== first.features[i]?.id),
      'new ids',
    );
  });

  test('workspaces are apart: another workspace exports only its own, and its batch never reaches ours', async () => {
    const other = await signUp(t, 'export-other');
    const theirs = { token: other.tokens.access_token };
    const ours = await exportAll(t, jwt);
    assert.ok(ours.features.length > 0);
    assert.deepEqual((await exportAll(t, theirs)).features, [], 'none of ours in theirs');
    // Their batch names our external ids and sends our export: new geofences of theirs.
    const result = await batch(t, theirs, ours);
    assert.equal(result.created.length, ours.features.length);
    assert.deepEqual(result.updated, []);
    assert.ok(result.created.every((g) => g.workspace_id === other.workspace.id));
    assert.deepEqual(await exportAll(t, jwt), ours, 'ours unchanged');
    const theirExport = await exportAll(t, theirs);
    assert.deepEqual(
      theirExport.features.map((f) => f.id),
      result.created.map((g) => g.id),
    );
  });

  test('5,000 geofences (timed): creation order across pages, one read per page of 500', async () => {
    const user = await signUp(t, 'export-5000');
    const token = { token: user.tokens.access_token };
    const rand = lcg(5000);
    for (let b = 0; b < 5; b++) {
      const geofences = Array.from({ length: 1000 }, (_v, i) => {
        const n = b * 1000 + i;
        const lng = -175 + (n % 70) * 5;
        const lat = -80 + Math.floor(n / 70) * 2.2;
        return n % 3 === 0
          ? { name: `circle ${n}`, external_id: `c-${n}`, geometry: circle(lng, lat, 2000), metadata: { n } }
          : { name: `star ${n}`, geometry: polygon(starRing(rand, lng, lat, 0.9, 12)), dwell_seconds: 600 };
      });
      const result = await batch(t, token, { geofences });
      assert.equal(result.created.length, 1000);
      t.clock.advance(1000);
    }
    const timings: number[] = [];
    let exported: FeatureCollectionOut | undefined;
    let bytes = 0;
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      const res = await call(t, '/geofences/export', token);
      timings.push(performance.now() - started);
      assert.equal(res.statusCode, 200);
      bytes = res.body.length;
      exported = res.json() as FeatureCollectionOut;
    }
    console.log(
      `# GET /geofences/export, 5,000 geofences (${(bytes / 1024 / 1024).toFixed(1)} MiB): ` +
        `${timings.map((ms) => ms.toFixed(0)).join(', ')} ms`,
    );
    const features = exported?.features ?? [];
    assert.equal(features.length, 5000);
    assert.equal(new Set(features.map((f) => f.id)).size, 5000, 'each geofence once');
    const names = features.map((f) => f.properties.name);
    assert.deepEqual(
      names,
      Array.from({ length: 5000 }, (_v, n) => (n % 3 === 0 ? `circle ${n}` : `star ${n}`)),
      'creation order',
    );

    // Bounded work per geofence: one read of the ids, then one read per page of 500.
    const counter = new StatementCounter();
    const ctx = {
      db: t.deps.database.db.withPlugin(counter),
      capabilities: t.deps.database.capabilities,
      clock: t.clock,
      registry: t.deps.geofenceIndexes,
    };
    const pages: number[] = [];
    for await (const page of exportGeofences(ctx, user.workspace.id, {})) pages.push(page.length);
    assert.deepEqual(pages, Array(10).fill(500));
    assert.equal(counter.count, 11);
  });
});
