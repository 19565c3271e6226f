import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const CHEAP_HASH = { passwordHash: { memoryKiB: 1024, passes: 1, parallelism: 1 } };

describe('error model (seed §7, contract §1)', () => {
  let t: TestApp;
  let ownerToken: string;
  before(async () => {
    t = await startTestApp({
      overrides: CHEAP_HASH,
      beforeReady: (app) => {
        app.get('/api/v1/_test/boom', { config: { auth: 'public' } }, async () => {
          throw new Error('database password is hunter2');
        });
      },
    });
    await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: 'owner@example.com', password: 'correct horse' },
    });
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'owner@example.com', password: 'correct horse' },
    });
    ownerToken = login.json().access_token;
  });
  after(async () => t.close());

  test('missing required fields → 422 with one `missing` issue per field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: {} });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.error_code, 'VALIDATION_ERROR');
    assert.deepEqual(
      body.detail.map((d: { type: string; loc: unknown[] }) => [d.type, d.loc]),
      [
        ['missing', ['body', 'email']],
        ['missing', ['body', 'password']],
      ],
    );
    for (const issue of body.detail) assert.equal(typeof issue.msg, 'string');
  });

  test('wrong scalar types → *_parsing / type issues', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: 42, password: true },
    });
    assert.equal(res.statusCode, 422);
    const types = res
      .json()
      .detail.map((d: { type: string; loc: unknown[] }) => `${d.type}@${d.loc.join('.')}`);
    assert.deepEqual(types.sort(), ['string_type@body.email', 'string_type@body.password']);
    const ttl = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/workspaces/${await workspaceId()}`,
      headers: { authorization: `Bearer ${ownerToken}` },
      payload: { settings: { access_token_ttl_seconds: 'soon' } },
    });
    assert.equal(ttl.statusCode, 422);
    assert.deepEqual(ttl.json().detail[0].type, 'int_parsing');
    assert.deepEqual(ttl.json().detail[0].loc, ['body', 'settings', 'access_token_ttl_seconds']);
  });

  test('too-long and too-short strings, bounds', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: 'a@example.com', password: 'short', name: 'x'.repeat(256) },
    });
    assert.equal(res.statusCode, 422);
    const issues = res
      .json()
      .detail.map((d: { type: string; loc: unknown[] }) => `${d.type}@${d.loc.join('.')}`);
    assert.deepEqual(issues.sort(), ['string_too_long@body.name', 'string_too_short@body.password']);
    const ttl = await t.app.inject({
      method: 'PATCH',
      url: `/api/v1/workspaces/${await workspaceId()}`,
      headers: { authorization: `Bearer ${ownerToken}` },
      payload: { settings: { access_token_ttl_seconds: 10 } },
    });
    assert.equal(ttl.json().detail[0].type, 'greater_than_equal');
  });

  test('nested array indexes are integers in `loc`', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/account/api-keys',
      headers: { authorization: `Bearer ${ownerToken}` },
      payload: { name: 'k', scopes: ['geofences:read', 'geofences:fly', 7] },
    });
    assert.equal(res.statusCode, 422);
    const locs = res.json().detail.map((d: { loc: unknown[] }) => d.loc);
    assert.deepEqual(locs[0], ['body', 'scopes', 1]);
    assert.ok(locs.some((loc: unknown[]) => loc[2] === 2 && typeof loc[2] === 'number'));
    assert.equal(res.json().detail[0].type, 'enum');
  });

  test('unknown fields where forbidden → extra_forbidden', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: 'b@example.com', password: 'long enough', admin: true },
    });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json().detail, [
      { type: 'extra_forbidden', loc: ['body', 'admin'], msg: 'Extra inputs are not permitted' },
    ]);
  });

  test('query parameters are validated with loc starting at `query`', async () => {
    const res = await t.app.inject({
      url: '/api/v1/account/api-keys?limit=500',
      headers: { authorization: `Bearer ${ownerToken}` },
    });
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json().detail[0].loc, ['query', 'limit']);
    assert.equal(res.json().detail[0].type, 'less_than_equal');
  });

  test('malformed JSON → 400 VALIDATION_ERROR', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": "a@b.c", "password": ',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error_code, 'VALIDATION_ERROR');
    assert.match(res.json().detail, /^Malformed JSON body/);
  });

  test('a body over 1 MiB → 413 with the error body', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'a@b.c', password: 'x'.repeat(1024 * 1024) }),
    });
    assert.equal(res.statusCode, 413);
    assert.equal(typeof res.json().detail, 'string');
  });

  test('unknown route → 404; wrong method → 405 with Allow', async () => {
    const missing = await t.app.inject({ url: '/api/v1/nothing-here' });
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { detail: 'Not found', error_code: 'NOT_FOUND' });
    const wrong = await t.app.inject({ method: 'DELETE', url: '/api/v1/auth/login' });
    assert.equal(wrong.statusCode, 405);
    assert.equal(wrong.headers.allow, 'POST');
    assert.equal(typeof wrong.json().detail, 'string');
  });

  test('unexpected errors → 500 without internals; logged with the request id also sent in X-Request-ID', async () => {
    const res = await t.app.inject({ url: '/api/v1/_test/boom', headers: { 'x-request-id': 'trace-123' } });
    assert.equal(res.statusCode, 500);
    assert.equal(res.headers['x-request-id'], 'trace-123');
    assert.doesNotMatch(res.body, /hunter2|Error:|at /);
    assert.deepEqual(res.json(), { detail: 'Internal server error', details: { request_id: 'trace-123' } });
    const logged = t.logs.find((l) => l.reqId === 'trace-123' && l.msg === 'unhandled error');
    assert.ok(logged, 'the error is logged with the request id');
    const generated = await t.app.inject({ url: '/healthz' });
    assert.match(generated.headers['x-request-id'] as string, /^[0-9a-f-]{36}$/);
  });

  test('request log lines carry id, route, status and duration, never credentials', async () => {
    await t.app.inject({
      url: '/api/v1/auth/me',
      headers: { authorization: `Bearer ${ownerToken}`, 'x-request-id': 'log-check' },
    });
    const line = t.logs.find((l) => l.reqId === 'log-check' && l.msg === 'request completed');
    assert.ok(line);
    assert.equal(line.route, '/api/v1/auth/me');
    assert.equal(line.status, 200);
    assert.equal(typeof line.durationMs, 'number');
    assert.doesNotMatch(JSON.stringify(t.logs), new RegExp(ownerToken.slice(-20)));
  });

  async function workspaceId(): Promise<string> {
    const me = await t.app.inject({
      url: '/api/v1/auth/me',
      headers: { authorization: `Bearer ${ownerToken}` },
    });
    return me.json().workspace_id;
  }
});
