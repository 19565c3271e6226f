/**
 * Free-form objects (contract §1): every key comes back exactly as sent — line breaks, U+2028 and
 * U+2029 included (the response schema used to keep only keys matching `^.*$`, and `.` matches no
 * line terminator) — and they nest at most 16 levels: a 17th level is 422 `value_error` at the
 * place it starts, and 10,000 levels are a 422 as well (they used to overflow the stack: 500).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGeofence, polygon, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import { assertIssue, issuesOf } from '../helpers/validation-issues.ts';
import { at, createDevice, type DeviceOut, type LocationOut, postLocation } from '../locations/helpers.ts';

/** Keys that a `^.*$` pattern does not match, and neighbours that it does. */
const AWKWARD = {
  'line\nfeed': 1,
  'carriage\rreturn': 2,
  'line\u2028separator': 3,
  'paragraph\u2029separator': 4,
  '\n': 5,
  '': 6,
  nested: { 'inner\nkey': ['a\nb', { '\u2028': null }] },
};

/** `levels` nested objects, the outermost being level 1. */
function nest(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 1; i < levels; i++) value = { k: value };
  return value;
}

describe('free-form objects', () => {
  let t: TestApp;
  let jwt: { token: string };

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'free')).tokens.access_token };
  });
  after(async () => t?.close());

  test('device metadata keeps keys with line terminators: create, read, list, update', async () => {
    const created = await createDevice(t, jwt, { metadata: AWKWARD });
    assert.deepEqual(created.metadata, AWKWARD);
    const read = expectStatus<DeviceOut>(await call(t, `/devices/${created.id}`, jwt), 200, 'get');
    assert.deepEqual(read.metadata, AWKWARD);
    const list = expectStatus<Page<DeviceOut>>(await call(t, '/devices', jwt), 200, 'list');
    assert.deepEqual(list.results.find((d) => d.id === created.id)?.metadata, AWKWARD);
    const patched = await call(t, `/devices/${created.id}`, {
      ...jwt,
      method: 'PATCH',
      body: { metadata: { 'only\nthis': true } },
    });
    assert.deepEqual(expectStatus<DeviceOut>(patched, 200, 'patch').metadata, { 'only\nthis': true });
  });

  test('geofence metadata and location metadata (and the events they make) keep them too', async () => {
    const fence = await createGeofence(t, jwt, {
      name: 'Yard',
      geometry: polygon(rect(2, 2, 2.01, 2.01)),
      metadata: AWKWARD,
    });
    assert.deepEqual(fence.metadata, AWKWARD);
    const read = expectStatus<{ metadata: unknown }>(
      await call(t, `/geofences/${fence.id}`, jwt),
      200,
      'get',
    );
    assert.deepEqual(read.metadata, AWKWARD);

    const device = await createDevice(t, jwt);
    const { location, events } = await postLocation(t, jwt, device.id, {
      coordinates: [2.005, 2.005],
      timestamp: at(0),
      metadata: AWKWARD,
    });
    assert.deepEqual(location.metadata, AWKWARD);
    assert.equal(events.length, 1);
    const metadata = (events[0] as unknown as { metadata: Record<string, unknown> }).metadata;
    assert.deepEqual(metadata, { geofence_metadata: AWKWARD, event_metadata: AWKWARD });
    const history = expectStatus<Page<LocationOut>>(
      await call(t, `/devices/${device.id}/locations`, jwt),
      200,
      'history',
    );
    assert.deepEqual(history.results[0]?.metadata, AWKWARD);
  });

  test('16 levels are accepted; a 17th is 422 value_error at the place where it starts', async () => {
    const device = await createDevice(t, jwt, { metadata: nest(16) });
    assert.deepEqual(device.metadata, nest(16));
    const deepAt = ['body', 'metadata', ...Array<string>(16).fill('k')];
    const cases: Array<[string, Parameters<typeof call>[2]]> = [
      ['create device', { ...jwt, body: { name: 'd', metadata: nest(17) } }],
      ['patch device', { ...jwt, method: 'PATCH', body: { metadata: nest(17) } }],
      [
        'create geofence',
        { ...jwt, body: { name: 'g', geometry: polygon(rect(0, 0, 1, 1)), metadata: nest(17) } },
      ],
      ['location', { ...jwt, body: { coordinates: [0, 0], metadata: nest(17) } }],
      ['session', { ...jwt, body: { metadata: nest(17) } }],
    ];
    const paths: Record<string, string> = {
      'create device': '/devices',
      'patch device': `/devices/${device.id}`,
      'create geofence': '/geofences',
      location: `/devices/${device.id}/locations`,
      session: `/devices/${device.id}/sessions`,
    };
    for (const [what, options] of cases) {
      const issues = issuesOf(await call(t, paths[what] ?? '', options), what);
      assert.deepEqual(issues, [
        { type: 'value_error', loc: deepAt, msg: 'Object nests more than 16 levels deep' },
      ]);
    }
    // Arrays count as levels too.
    const arrays = await call(t, '/devices', {
      ...jwt,
      body: { name: 'd', metadata: { list: JSON.parse(`${'['.repeat(16)}1${']'.repeat(16)}`) } },
    });
    assertIssue(
      issuesOf(arrays, 'arrays'),
      'value_error',
      ['body', 'metadata', 'list', ...Array<number>(15).fill(0)],
      'arrays',
    );
    const unchanged = expectStatus<DeviceOut>(await call(t, `/devices/${device.id}`, jwt), 200, 'get');
    assert.deepEqual(unchanged.metadata, nest(16), 'the refused PATCH changed nothing');
  });

  test('10,000 (device) and 5,000 (location) levels are a 422, not a stack overflow', async () => {
    const device = await createDevice(t, jwt);
    for (const [url, levels, extra] of [
      ['/api/v1/devices', 10_000, '"name": "deep"'],
      [`/api/v1/devices/${device.id}/locations`, 5_000, '"coordinates": [0, 0]'],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${jwt.token}`, 'content-type': 'application/json' },
        payload: `{${extra}, "metadata": ${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`,
      });
      const issues = issuesOf(res, `${levels} levels`);
      assert.equal(issues.length, 1);
      assert.equal(issues[0]?.type, 'value_error');
      assert.deepEqual(issues[0]?.loc.slice(0, 3), ['body', 'metadata', 'a']);
    }
  });
});
