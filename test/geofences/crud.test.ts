/**
 * Geofence CRUD through HTTP (contract §3): JWT and API keys (both header forms), the record's
 * shape and bbox, list filters and pagination, partial updates, deletion, external_id uniqueness
 * (including the race) and the 404 body for unknown or foreign ids.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { geometryBbox } from '../../src/geo/index.ts';
import type { TestApp } from '../helpers/app.ts';
import {
  type CreatedApiKey,
  call,
  createApiKey,
  expectError,
  expectStatus,
  type Page,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { circle, createGeofence, type GeofenceOut, polygon, rect } from './helpers.ts';

const NOT_FOUND = { detail: 'Geofence not found', error_code: 'NOT_FOUND' };

describe('geofence CRUD', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let jwt: { token: string };
  let writeKey: CreatedApiKey;
  let readKey: CreatedApiKey;

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'geofences');
    jwt = { token: owner.tokens.access_token };
    writeKey = await createApiKey(t, owner.tokens.access_token, ['geofences:write']);
    readKey = await createApiKey(t, owner.tokens.access_token, ['geofences:read']);
  });
  after(async () => t?.close());

  test('a polygon with a hole: 201, the full record, bbox of the shell, normalised geometry', async () => {
    const shell = rect(13.3, 52.4, 13.5, 52.6);
    const hole = rect(13.35, 52.45, 13.4, 52.5).reverse();
    const res = await call(t, '/geofences', {
      ...jwt,
      body: {
        name: 'Berlin centre',
        description: 'with a hole',
        external_id: 'berlin-1',
        // An altitude and a repeated position: both are normalised away.
        geometry: polygon(
          [
            [13.3, 52.4, 34],
            [13.5, 52.4],
            [13.5, 52.4],
            [13.5, 52.6],
            [13.3, 52.6],
            [13.3, 52.4],
          ] as never,
          hole,
        ),
        metadata: { team: 'ops', priority: 2, tags: ['a', 'b'], nested: { x: null } },
      },
    });
    const g = expectStatus<GeofenceOut>(res, 201, 'create polygon');
    assert.match(g.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(g.workspace_id, owner.workspace.id);
    assert.equal(g.name, 'Berlin centre');
    assert.equal(g.description, 'with a hole');
    assert.equal(g.external_id, 'berlin-1');
    assert.equal(g.enabled, true, 'enabled by default');
    assert.deepEqual(g.geometry, polygon(shell, hole));
    assert.deepEqual(g.metadata, { team: 'ops', priority: 2, tags: ['a', 'b'], nested: { x: null } });
    assert.deepEqual(g.bbox, [13.3, 52.4, 13.5, 52.6]);
    assert.equal(g.created_at, '2026-03-10T12:00:00.000Z');
    assert.equal(g.updated_at, g.created_at);
    assert.deepEqual(Object.keys(g).sort(), [
      'bbox',
      'created_at',
      'description',
      'dwell_seconds',
      'enabled',
      'exit_buffer_m',
      'external_id',
      'geometry',
      'id',
      'max_accuracy_m',
      'metadata',
      'name',
      'updated_at',
      'workspace_id',
    ]);
    const fetched = expectStatus<GeofenceOut>(await call(t, `/geofences/${g.id}`, jwt), 200);
    assert.deepEqual(fetched, g, 'GET returns what POST returned');
  });

  test('a circle through an API key (Bearer and X-API-Key); defaults; bbox from the engine', async () => {
    const bearer = await createGeofence(
      t,
      { token: writeKey.key },
      { name: 'Depot', geometry: circle(13.4, 52.5, 500) },
    );
    assert.deepEqual(bearer.geometry, circle(13.4, 52.5, 500));
    assert.equal(bearer.description, null);
    assert.equal(bearer.external_id, null);
    assert.deepEqual(bearer.metadata, {});
    assert.deepEqual(bearer.bbox, geometryBbox(circle(13.4, 52.5, 500)));
    const [west, south, east, north] = bearer.bbox;
    assert.ok(west < 13.4 && east > 13.4 && south < 52.5 && north > 52.5, 'the box holds the centre');
    // 500 m is ~0.0045° of latitude either side.
    assert.ok(Math.abs(north - 52.5 - 500 / 111_195) < 1e-6, `north ${north}`);

    const header = await createGeofence(
      t,
      { apiKey: writeKey.key },
      { name: 'Across the antimeridian', geometry: circle(179.999, 0, 1000), enabled: false },
    );
    assert.equal(header.enabled, false);
    assert.ok(header.bbox[0] > header.bbox[2], `a wrapping box has west > east: ${header.bbox}`);
    // A read-only key reads it, both header forms.
    expectStatus(await call(t, `/geofences/${header.id}`, { token: readKey.key }), 200);
    expectStatus(await call(t, `/geofences/${header.id}`, { apiKey: readKey.key }), 200);
  });

  test('a read-only key cannot write: 403 INSUFFICIENT_PERMISSIONS', async () => {
    const res = await call(t, '/geofences', {
      apiKey: readKey.key,
      body: { name: 'nope', geometry: circle(0, 0, 10) },
    });
    const body = expectError(res, 403, 'INSUFFICIENT_PERMISSIONS');
    assert.match(String(body.detail), /requires scope geofences:write/);
  });

  test('unknown, malformed and other-workspace ids → 404 {"detail":"Geofence not found"}', async () => {
    const other = await signUp(t, 'other-ws');
    const foreign = await createGeofence(
      t,
      { token: other.tokens.access_token },
      { name: 'theirs', geometry: circle(1, 1, 100) },
    );
    for (const id of [randomUUID(), 'not-a-uuid', foreign.id]) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'x' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await call(t, `/geofences/${id}`, { ...jwt, method, ...(body ? { body } : {}) });
        assert.deepEqual(expectError(res, 404, 'NOT_FOUND', `${method} ${id}`), NOT_FOUND);
      }
    }
    const theirs = expectStatus<GeofenceOut>(
      await call(t, `/geofences/${foreign.id}`, { token: other.tokens.access_token }),
      200,
    );
    assert.equal(theirs.name, 'theirs', 'untouched');
  });

  test('schema failures → 422 with loc under body', async () => {
    const cases: Array<[string, Record<string, unknown>, string, Array<string | number>]> = [
      ['no name', { geometry: circle(0, 0, 10) }, 'missing', ['body', 'name']],
      ['empty name', { name: '', geometry: circle(0, 0, 10) }, 'string_too_short', ['body', 'name']],
      [
        'long name',
        { name: 'x'.repeat(256), geometry: circle(0, 0, 10) },
        'string_too_long',
        ['body', 'name'],
      ],
      ['no geometry', { name: 'x' }, 'missing', ['body', 'geometry']],
      ['geometry a string', { name: 'x', geometry: 'Polygon' }, 'dict_type', ['body', 'geometry']],
      [
        'unknown field',
        { name: 'x', geometry: circle(0, 0, 10), colour: 'red' },
        'extra_forbidden',
        ['body', 'colour'],
      ],
      [
        'external_id too long',
        { name: 'x', geometry: circle(0, 0, 10), external_id: 'e'.repeat(256) },
        'string_too_long',
        ['body', 'external_id'],
      ],
      [
        'metadata a list',
        { name: 'x', geometry: circle(0, 0, 10), metadata: [1] },
        'dict_type',
        ['body', 'metadata'],
      ],
      [
        'enabled a string',
        { name: 'x', geometry: circle(0, 0, 10), enabled: 'yes' },
        'bool_parsing',
        ['body', 'enabled'],
      ],
    ];
    for (const [what, body, type, loc] of cases) {
      const res = await call(t, '/geofences', { ...jwt, body });
      const detail = expectError(res, 422, 'VALIDATION_ERROR', what).detail as Array<{
        type: string;
        loc: unknown;
      }>;
      assert.ok(
        detail.some((d) => d.type === type && JSON.stringify(d.loc) === JSON.stringify(loc)),
        `${what}: ${JSON.stringify(detail)}`,
      );
    }
    // 255 characters is the maximum, not beyond it.
    await createGeofence(t, jwt, { name: 'n'.repeat(255), geometry: circle(0, 0, 10) });
  });

  test('external_id: unique per workspace → 400 DUPLICATE_RESOURCE; NULL many times; other workspaces free', async () => {
    await createGeofence(t, jwt, { name: 'a', external_id: 'dup-1', geometry: circle(0, 0, 10) });
    const res = await call(t, '/geofences', {
      ...jwt,
      body: { name: 'b', external_id: 'dup-1', geometry: circle(0, 0, 10) },
    });
    assert.deepEqual(expectError(res, 400, 'DUPLICATE_RESOURCE'), {
      detail: 'A geofence with external_id "dup-1" already exists',
      error_code: 'DUPLICATE_RESOURCE',
    });
    // Without external_id (and with an explicit null) any number of times.
    for (let i = 0; i < 3; i++)
      await createGeofence(t, jwt, { name: `none ${i}`, geometry: circle(0, 0, 10) });
    await createGeofence(t, jwt, { name: 'null', external_id: null, geometry: circle(0, 0, 10) });
    const other = await signUp(t, 'dup-other');
    await createGeofence(
      t,
      { token: other.tokens.access_token },
      { name: 'same id elsewhere', external_id: 'dup-1', geometry: circle(0, 0, 10) },
    );
  });

  test('concurrent creates with one external_id: exactly one 201, the rest 400 DUPLICATE_RESOURCE', async () => {
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_v, i) =>
        call(t, '/geofences', {
          ...jwt,
          body: { name: `race ${i}`, external_id: 'race', geometry: circle(0, 0, 10) },
        }),
      ),
    );
    const statuses = responses.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [201, 400, 400, 400, 400, 400], responses.map((r) => r.body).join('\n'));
    for (const r of responses.filter((x) => x.statusCode === 400)) {
      assert.equal(r.json().error_code, 'DUPLICATE_RESOURCE');
    }
  });

  test('PATCH: partial; name, description, enabled, metadata (whole), geometry (whole, new bbox)', async () => {
    const g = await createGeofence(t, jwt, {
      name: 'patch me',
      description: 'before',
      external_id: 'patch-1',
      geometry: polygon(rect(0, 0, 1, 1)),
      metadata: { keep: false, old: 1 },
    });
    t.clock.advance(60_000);
    const patch = async (body: Record<string, unknown>) =>
      expectStatus<GeofenceOut>(
        await call(t, `/geofences/${g.id}`, { ...jwt, method: 'PATCH', body }),
        200,
        JSON.stringify(body),
      );

    const renamed = await patch({ name: 'patched' });
    assert.equal(renamed.name, 'patched');
    assert.equal(renamed.description, 'before', 'absent fields keep their value');
    assert.deepEqual(renamed.metadata, { keep: false, old: 1 });
    assert.equal(renamed.created_at, g.created_at);
    assert.equal(renamed.updated_at, '2026-03-10T12:01:00.000Z');

    const disabled = await patch({ enabled: false, description: null });
    assert.equal(disabled.enabled, false);
    assert.equal(disabled.description, null);
    assert.equal(disabled.name, 'patched');

    const meta = await patch({ metadata: { fresh: true } });
    assert.deepEqual(meta.metadata, { fresh: true }, 'metadata is replaced, not merged');

    const moved = await patch({ geometry: circle(10, 20, 1000), enabled: true });
    assert.deepEqual(moved.geometry, circle(10, 20, 1000));
    assert.deepEqual(moved.bbox, geometryBbox(circle(10, 20, 1000)));
    assert.equal(moved.enabled, true);
    assert.equal(moved.external_id, 'patch-1');

    t.clock.advance(60_000);
    const same = await patch({});
    assert.deepEqual(same, moved, 'an empty patch changes nothing, not even updated_at');
    assert.deepEqual(expectStatus(await call(t, `/geofences/${g.id}`, jwt), 200), same);
  });

  test('PATCH external_id: to a taken one → 400; to its own → 200; cleared with null frees it', async () => {
    const a = await createGeofence(t, jwt, { name: 'a', external_id: 'ext-a', geometry: circle(0, 0, 10) });
    const b = await createGeofence(t, jwt, { name: 'b', external_id: 'ext-b', geometry: circle(0, 0, 10) });
    const clash = await call(t, `/geofences/${b.id}`, {
      ...jwt,
      method: 'PATCH',
      body: { external_id: 'ext-a' },
    });
    expectError(clash, 400, 'DUPLICATE_RESOURCE');
    expectStatus(
      await call(t, `/geofences/${a.id}`, { ...jwt, method: 'PATCH', body: { external_id: 'ext-a' } }),
      200,
    );
    const cleared = expectStatus<GeofenceOut>(
      await call(t, `/geofences/${a.id}`, { ...jwt, method: 'PATCH', body: { external_id: null } }),
      200,
    );
    assert.equal(cleared.external_id, null);
    const taken = expectStatus<GeofenceOut>(
      await call(t, `/geofences/${b.id}`, { ...jwt, method: 'PATCH', body: { external_id: 'ext-a' } }),
      200,
    );
    assert.equal(taken.external_id, 'ext-a');
  });

  test('PATCH with an invalid geometry → 400/422 and nothing changes', async () => {
    const g = await createGeofence(t, jwt, { name: 'stable', geometry: polygon(rect(0, 0, 1, 1)) });
    const bowtie = polygon([
      [0, 0],
      [1, 1],
      [1, 0],
      [0, 1],
      [0, 0],
    ]);
    const invalid = await call(t, `/geofences/${g.id}`, {
      ...jwt,
      method: 'PATCH',
      body: { name: 'changed', geometry: bowtie },
    });
    assert.equal(expectError(invalid, 400, 'INVALID_GEOMETRY').details?.reason, 'self_intersection');
    const malformed = await call(t, `/geofences/${g.id}`, {
      ...jwt,
      method: 'PATCH',
      body: { name: 'changed', geometry: { type: 'Polygon' } },
    });
    const detail = expectError(malformed, 422, 'VALIDATION_ERROR').detail;
    assert.deepEqual(detail, [
      { type: 'missing', loc: ['body', 'geometry', 'coordinates'], msg: 'Field required' },
    ]);
    assert.deepEqual(expectStatus(await call(t, `/geofences/${g.id}`, jwt), 200), g);
  });

  test('DELETE → 204 without a body; then 404 for GET and DELETE', async () => {
    const g = await createGeofence(t, jwt, {
      name: 'doomed',
      external_id: 'doomed',
      geometry: circle(0, 0, 10),
    });
    const res = await call(t, `/geofences/${g.id}`, { ...jwt, method: 'DELETE' });
    expectStatus(res, 204);
    assert.equal(res.body, '');
    assert.deepEqual(expectError(await call(t, `/geofences/${g.id}`, jwt), 404, 'NOT_FOUND'), NOT_FOUND);
    expectError(await call(t, `/geofences/${g.id}`, { ...jwt, method: 'DELETE' }), 404, 'NOT_FOUND');
    // Its external_id is free again.
    await createGeofence(
      t,
      { token: writeKey.key },
      { name: 'reborn', external_id: 'doomed', geometry: circle(0, 0, 10) },
    );
  });
});

describe('geofence list: newest first, filters, pagination', () => {
  let t: TestApp;
  let token: string;
  const made: GeofenceOut[] = [];

  before(async () => {
    t = await startIdentityApp();
    const owner = await signUp(t, 'list');
    token = owner.tokens.access_token;
    const names = ['Alpha Park', 'beta PARK', 'Gamma', '100%_real', 'Ölberg', 'delta park'];
    for (const [i, name] of names.entries()) {
      t.clock.advance(1000); // distinct created_at, so "newest first" is observable
      made.push(
        await createGeofence(
          t,
          { token },
          {
            name,
            external_id: `ext-${i}`,
            enabled: i % 2 === 0,
            geometry: circle(i, i, 100),
          },
        ),
      );
    }
    // Another workspace's geofences never show up.
    const other = await signUp(t, 'list-other');
    await createGeofence(
      t,
      { token: other.tokens.access_token },
      { name: 'Alpha Park', geometry: circle(0, 0, 10) },
    );
  });
  after(async () => t?.close());

  async function list(query: Record<string, string> = {}) {
    return expectStatus<Page<GeofenceOut>>(
      await call(t, '/geofences', { token, query }),
      200,
      JSON.stringify(query),
    );
  }
  const names = (p: Page<GeofenceOut>) => p.results.map((g) => g.name);

  test('all of the workspace, newest first, default page', async () => {
    const page = await list();
    assert.deepEqual(
      names(page),
      [...made].reverse().map((g) => g.name),
    );
    assert.deepEqual(page.pagination, { total: 6, limit: 50, offset: 0, has_more: false });
  });

  test('offset and limit', async () => {
    const first = await list({ limit: '4' });
    assert.deepEqual(names(first), ['delta park', 'Ölberg', '100%_real', 'Gamma']);
    assert.deepEqual(first.pagination, { total: 6, limit: 4, offset: 0, has_more: true });
    const second = await list({ limit: '4', offset: '4' });
    assert.deepEqual(names(second), ['beta PARK', 'Alpha Park']);
    assert.deepEqual(second.pagination, { total: 6, limit: 4, offset: 4, has_more: false });
    const beyond = await list({ offset: '10' });
    assert.deepEqual(beyond.results, []);
    assert.equal(beyond.pagination.total, 6);
  });

  test('enabled filter', async () => {
    assert.deepEqual(names(await list({ enabled: 'true' })), ['Ölberg', 'Gamma', 'Alpha Park']);
    assert.deepEqual(names(await list({ enabled: 'false' })), ['delta park', '100%_real', 'beta PARK']);
    assert.equal((await list({ enabled: 'false' })).pagination.total, 3);
  });

  test('external_id filter (exact)', async () => {
    assert.deepEqual(names(await list({ external_id: 'ext-2' })), ['Gamma']);
    assert.deepEqual(names(await list({ external_id: 'ext' })), []);
  });

  test('q: case-insensitive name substring; % and _ are literal', async () => {
    assert.deepEqual(names(await list({ q: 'park' })), ['delta park', 'beta PARK', 'Alpha Park']);
    assert.deepEqual(names(await list({ q: 'PARK', enabled: 'true' })), ['Alpha Park']);
    assert.deepEqual(names(await list({ q: '%_' })), ['100%_real']);
    assert.deepEqual(names(await list({ q: '_' })), ['100%_real']);
    assert.deepEqual(names(await list({ q: 'berg' })), ['Ölberg']);
    assert.deepEqual(names(await list({ q: 'zzz' })), []);
    const filtered = await list({ q: 'park', limit: '1', offset: '1' });
    assert.deepEqual(filtered.pagination, { total: 3, limit: 1, offset: 1, has_more: true });
  });

  test('bad query values → 422 with loc under query', async () => {
    for (const [query, type, field] of [
      [{ limit: '0' }, 'greater_than_equal', 'limit'],
      [{ limit: '201' }, 'less_than_equal', 'limit'],
      [{ offset: '-1' }, 'greater_than_equal', 'offset'],
      [{ enabled: 'maybe' }, 'bool_parsing', 'enabled'],
      [{ q: '' }, 'string_too_short', 'q'],
    ] as const) {
      const detail = expectError(await call(t, '/geofences', { token, query }), 422, 'VALIDATION_ERROR')
        .detail as Array<{ type: string; loc: unknown }>;
      assert.deepEqual(
        detail.map((d) => [d.type, d.loc]),
        [[type, ['query', field]]],
      );
    }
  });
});
