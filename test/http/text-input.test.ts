/**
 * Contract §1 text rules over HTTP: a NUL (U+0000) or a lone surrogate in any string or object key of
 * a body, a query or a path, and a non-finite number, are 422 `value_error` at their exact `loc` —
 * on the unauthenticated routes too — and nothing is stored. PostgreSQL used to answer 500 (it cannot
 * store them) while SQLite stored them; the suite runs on each database and expects the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import { assertIssue, issuesOf } from '../helpers/validation-issues.ts';
import { createDevice, type DeviceOut } from '../locations/helpers.ts';

describe('text rules: NUL, lone surrogates, non-finite numbers', () => {
  let t: TestApp;
  let jwt: { token: string };

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'text')).tokens.access_token };
  });
  after(async () => t?.close());

  const deviceCount = async () =>
    expectStatus<Page<DeviceOut>>(await call(t, '/devices', jwt), 200, 'list devices').pagination.total;

  test('unauthenticated routes: a NUL or a lone surrogate in the body is 422, not 500', async () => {
    for (const [name, loc] of [
      ['a\u0000b', ['body', 'name']],
      ['lone \ud800 surrogate', ['body', 'name']],
      ['trailing \udfff', ['body', 'name']],
    ] as const) {
      const res = await call(t, '/auth/register', {
        body: { email: 'nul@example.com', password: 'long enough password', name },
      });
      assertIssue(
        issuesOf(res, `register name ${JSON.stringify(name)}`),
        'value_error',
        [...loc],
        'register',
      );
    }
    const reset = await call(t, '/auth/password-reset/request', { body: { email: 'x\u0000@example.com' } });
    assertIssue(issuesOf(reset, 'password reset'), 'value_error', ['body', 'email'], 'password reset');
    const login = await call(t, '/auth/login', {
      body: { email: 'a@example.com', password: 'pass\u0000word' },
    });
    assertIssue(issuesOf(login, 'login'), 'value_error', ['body', 'password'], 'login');
    // Nothing was created: the address is still free.
    expectStatus(
      await call(t, '/auth/register', {
        body: { email: 'nul@example.com', password: 'long enough password' },
      }),
      201,
      'register after the refusals',
    );
  });

  test('a NUL in a query or a path parameter is 422 at query/path', async () => {
    const query = await call(t, '/devices?q=a%00b', jwt);
    assert.deepEqual(issuesOf(query, 'query'), [
      { type: 'value_error', loc: ['query', 'q'], msg: 'Text may not contain NUL (U+0000)' },
    ]);
    const path = await call(t, '/devices/a%00b', jwt);
    assertIssue(issuesOf(path, 'path'), 'value_error', ['path', 'device_id'], 'path');
    const patch = await call(t, '/devices/a%00b', { ...jwt, method: 'PATCH', body: { name: 'x' } });
    assertIssue(issuesOf(patch, 'patch path'), 'value_error', ['path', 'device_id'], 'patch path');
  });

  test('object keys at any depth: loc ends with the key itself', async () => {
    const before = await deviceCount();
    const cases: Array<[Record<string, unknown>, Array<string | number>]> = [
      [{ 'k\u0000': 1 }, ['body', 'metadata', 'k\u0000']],
      [{ outer: { list: [{ '\ud800': true }] } }, ['body', 'metadata', 'outer', 'list', 0, '\ud800']],
      [{ outer: { inner: 'x\u0000' } }, ['body', 'metadata', 'outer', 'inner']],
      [{ outer: ['ok', '\udc00'] }, ['body', 'metadata', 'outer', 1]],
    ];
    for (const [metadata, loc] of cases) {
      const res = await call(t, '/devices', { ...jwt, body: { name: 'd', metadata } });
      const issues = issuesOf(res, `metadata ${JSON.stringify(metadata)}`);
      assert.equal(issues.length, 1, JSON.stringify(issues));
      assertIssue(issues, 'value_error', loc, 'metadata');
    }
    assert.equal(await deviceCount(), before, 'no device was created');
  });

  test('the same rules on every kind of write: geofence, location, session, webhook, workspace', async () => {
    const device = await createDevice(t, jwt);
    const geofence = await call(t, '/geofences', {
      ...jwt,
      body: {
        name: 'Yard',
        geometry: { type: 'Circle', coordinates: [0, 0], radius: 10 },
        metadata: { 'a\u0000': 1 },
      },
    });
    assertIssue(issuesOf(geofence, 'geofence'), 'value_error', ['body', 'metadata', 'a\u0000'], 'geofence');
    const location = await call(t, `/devices/${device.id}/locations`, {
      ...jwt,
      body: { coordinates: [1, 2], metadata: { a: 'x\u0000' } },
    });
    assertIssue(issuesOf(location, 'location'), 'value_error', ['body', 'metadata', 'a'], 'location');
    const session = await call(t, `/devices/${device.id}/sessions`, {
      ...jwt,
      body: { metadata: { trip: '\ud800' } },
    });
    assertIssue(issuesOf(session, 'session'), 'value_error', ['body', 'metadata', 'trip'], 'session');
    const webhook = await call(t, '/webhooks', {
      ...jwt,
      body: { name: 'hook', url: 'https://example.com/h', headers: { 'X-Token': 'a\u0000' } },
    });
    assertIssue(issuesOf(webhook, 'webhook'), 'value_error', ['body', 'headers', 'X-Token'], 'webhook');
    const workspace = await call(t, '/workspaces', { ...jwt, body: { name: 'w\u0000' } });
    assertIssue(issuesOf(workspace, 'workspace'), 'value_error', ['body', 'name'], 'workspace');
    const history = await call(t, `/devices/${device.id}/locations`, jwt);
    assert.equal(expectStatus<Page<unknown>>(history, 200, 'history').pagination.total, 0);
  });

  test('numbers are finite: 1e309 (Infinity once parsed) is 422 at its loc, not stored as null', async () => {
    const device = await createDevice(t, jwt);
    for (const field of ['accuracy', 'speed', 'altitude']) {
      for (const literal of ['1e309', '-1e309']) {
        const res = await t.app.inject({
          method: 'POST',
          url: `/api/v1/devices/${device.id}/locations`,
          headers: { authorization: `Bearer ${jwt.token}`, 'content-type': 'application/json' },
          payload: `{"coordinates": [1, 2], "${field}": ${literal}}`,
        });
        assert.deepEqual(issuesOf(res, `${field} ${literal}`), [
          { type: 'value_error', loc: ['body', field], msg: 'Input should be a finite number' },
        ]);
      }
    }
    const inCoordinates = await t.app.inject({
      method: 'POST',
      url: `/api/v1/devices/${device.id}/locations`,
      headers: { authorization: `Bearer ${jwt.token}`, 'content-type': 'application/json' },
      payload: '{"coordinates": [1e999, 2]}',
    });
    assertIssue(issuesOf(inCoordinates, 'coordinates'), 'value_error', ['body', 'coordinates', 0], 'lng');
    const history = await call(t, `/devices/${device.id}/locations`, jwt);
    assert.equal(expectStatus<Page<unknown>>(history, 200, 'history').pagination.total, 0);
  });

  test('two external ids differing only in a lone surrogate are refused, not merged into one', async () => {
    const before = await deviceCount();
    for (const externalId of ['truck\ud800', 'truck\udbff']) {
      const res = await call(t, '/devices', { ...jwt, body: { name: 'd', external_id: externalId } });
      assertIssue(issuesOf(res, externalId), 'value_error', ['body', 'external_id'], 'external id');
    }
    assert.equal(await deviceCount(), before);
  });
});
