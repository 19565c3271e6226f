/**
 * Request-level rules of contract §1 and ADR 003: list offsets are bounded, timestamps must be ones
 * both databases store, a path that is not valid percent-encoded UTF-8 gets the contract's error
 * body, and a body that is not JSON is 415 on every route that could carry one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import { assertIssue, issuesOf } from '../helpers/validation-issues.ts';
import { createDevice } from '../locations/helpers.ts';

describe('request format rules', () => {
  let t: TestApp;
  let jwt: { token: string };
  let deviceId: string;

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'format')).tokens.access_token };
    deviceId = (await createDevice(t, jwt)).id;
  });
  after(async () => t?.close());

  test('offset is 0..1,000,000: beyond is less_than_equal, a non-integer int_parsing', async () => {
    for (const path of ['/devices', '/geofences', '/events', '/webhooks', `/devices/${deviceId}/locations`]) {
      for (const offset of ['1e20', '1000001']) {
        const res = await call(t, `${path}?offset=${offset}`, jwt);
        assert.deepEqual(issuesOf(res, `${path} offset ${offset}`), [
          {
            type: 'less_than_equal',
            loc: ['query', 'offset'],
            msg: 'Input should be less than or equal to 1000000',
          },
        ]);
      }
      const page = expectStatus<{ pagination: { offset: number } }>(
        await call(t, `${path}?offset=1000000`, jwt),
        200,
        `${path} at the bound`,
      );
      assert.equal(page.pagination.offset, 1_000_000);
      assertIssue(
        issuesOf(await call(t, `${path}?offset=1.5`, jwt), 'fraction'),
        'int_parsing',
        ['query', 'offset'],
        path,
      );
    }
  });

  test('timestamps are in the UTC years 0001..9999 and readable: elsewhere 422 value_error', async () => {
    const refused = [
      '0000-01-01T00:00:00Z',
      '0001-01-01T00:00:00+00:01', // the year 0000 in UTC
      '9999-12-31T23:59:59-00:01', // the year 10000 in UTC
      '2026-03-10T23:59:60Z', // a leap second: JavaScript cannot read it
    ];
    for (const text of refused) {
      const query = await call(t, `/devices/${deviceId}/locations?from=${encodeURIComponent(text)}`, jwt);
      assertIssue(issuesOf(query, `from ${text}`), 'value_error', ['query', 'from'], text);
      const key = await call(t, '/account/api-keys', {
        ...jwt,
        body: { name: 'k', scopes: ['devices:read'], expires_at: text },
      });
      assertIssue(issuesOf(key, `expires_at ${text}`), 'value_error', ['body', 'expires_at'], text);
    }
    for (const text of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
      const res = await call(
        t,
        `/events?from=${encodeURIComponent(text)}&to=${encodeURIComponent(text)}`,
        jwt,
      );
      expectStatus(res, 200, `events at ${text}`);
    }
    const farFuture = await call(t, '/account/api-keys', {
      ...jwt,
      body: { name: 'k', scopes: ['devices:read'], expires_at: '9999-12-31T23:59:59Z' },
    });
    assert.equal(
      expectStatus<{ expires_at: string }>(farFuture, 201, 'key').expires_at,
      '9999-12-31T23:59:59.000Z',
    );
  });

  test('a path that is not valid percent-encoded UTF-8 → 400 VALIDATION_ERROR with the error body', async () => {
    for (const path of ['/api/v1/devices/%E0%A4%A', '/api/v1/devices/%ED%A0%80', '/api/v1/devices/%FF']) {
      const res = await t.app.inject({ url: path, headers: { authorization: `Bearer ${jwt.token}` } });
      const body = expectError(res, 400, 'VALIDATION_ERROR', path);
      assert.match(String(body.detail), /^Malformed URL/);
      assert.deepEqual(Object.keys(body).sort(), ['detail', 'error_code']);
    }
  });

  test('a body that is not JSON → 415 with the error body; body-less routes as documented', async () => {
    const headers = { authorization: `Bearer ${jwt.token}` };
    const unsupported = { detail: 'Unsupported Content-Type; send application/json' };
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const create = await t.app.inject({
        method: 'POST',
        url: '/api/v1/devices',
        headers: { ...headers, 'content-type': contentType },
        payload: 'name=x',
      });
      assert.equal(create.statusCode, 415, `${contentType}: ${create.body}`);
      assert.deepEqual(create.json(), unsupported);
      // A route that takes no body reads none, but a body of another type is still refused.
      const action = await t.app.inject({
        method: 'POST',
        url: '/api/v1/account/notifications/read-all',
        headers: { ...headers, 'content-type': contentType },
        payload: 'x',
      });
      assert.equal(action.statusCode, 415, `read-all ${contentType}: ${action.body}`);
      assert.deepEqual(action.json(), unsupported);
    }
    // Without a Content-Type and without a body, a body-less action is fine; GET ignores bodies.
    const bare = await t.app.inject({
      method: 'POST',
      url: '/api/v1/account/notifications/read-all',
      headers,
    });
    expectStatus(bare, 200, 'bare POST');
    const get = await t.app.inject({
      method: 'GET',
      url: '/api/v1/devices',
      headers: { ...headers, 'content-type': 'text/plain' },
      payload: 'ignored',
    });
    expectStatus(get, 200, 'GET with a text body');
    const json = await t.app.inject({
      method: 'POST',
      url: '/api/v1/devices',
      headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
      payload: '{"name": "json with charset"}',
    });
    expectStatus(json, 201, 'JSON with a charset parameter');
  });
});
