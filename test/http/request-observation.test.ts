/**
 * The per-request work that ADR 012 made cheaper keeps its contract: X-Request-ID on every answer
 * (including those that end before the handler), one log line per request with its fields, per-route
 * metrics that add up, and validation errors that carry no stack.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request observation', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({
      beforeReady: (app) => {
        app.get('/api/v1/_test/boom', { config: { auth: 'public' } }, async () => {
          throw new Error('boom');
        });
      },
    });
  });
  after(async () => t.close());

  test('every kind of answer carries X-Request-ID, generated as a UUIDv7 or kept from the caller', async () => {
    const answers = [
      await t.app.inject({ url: '/healthz' }),
      await t.app.inject({ url: '/api/v1/auth/me' }), // 401 from the route-auth hook
      await t.app.inject({ url: '/api/v1/auth/me', headers: { authorization: 'Bearer nonsense' } }),
      await t.app.inject({ url: '/api/v1/nothing-here' }), // 404
      await t.app.inject({ method: 'DELETE', url: '/api/v1/auth/login' }), // 405
      await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: {} }), // 422
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        headers: { 'content-type': 'application/json' },
        payload: '{"email":',
      }), // 400
      await t.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ email: 'x'.repeat(1024 * 1024), password: 'p' }),
      }), // 413
      await t.app.inject({ url: '/api/v1/_test/boom' }), // 500
    ];
    assert.deepEqual(
      answers.map((r) => r.statusCode),
      [200, 401, 401, 404, 405, 422, 400, 413, 500],
    );
    const ids = answers.map((r) => r.headers['x-request-id'] as string);
    for (const id of ids) assert.match(id, UUID_V7);
    assert.equal(new Set(ids).size, ids.length, 'a fresh id per request');
    assert.deepEqual([...ids].sort(), ids, 'ids from one process sort by creation');

    const kept = await t.app.inject({ url: '/healthz', headers: { 'x-request-id': 'edge-42.a:b' } });
    assert.equal(kept.headers['x-request-id'], 'edge-42.a:b');
    const replaced = await t.app.inject({ url: '/healthz', headers: { 'x-request-id': 'has spaces' } });
    assert.match(replaced.headers['x-request-id'] as string, UUID_V7);
  });

  test('one log line per request: id, method, route template, url, status, duration', async () => {
    const before = t.logs.length;
    const res = await t.app.inject({ url: '/api/v1/auth/me?x=1', headers: { 'x-request-id': 'one-line' } });
    assert.equal(res.statusCode, 401);
    const lines = t.logs.slice(before).filter((l) => l.reqId === 'one-line');
    assert.equal(lines.length, 1);
    const { level, time, pid, hostname, ...fields } = lines[0] ?? {};
    assert.equal(level, 30);
    assert.equal(typeof time, 'number');
    assert.equal(typeof pid, 'number');
    assert.equal(typeof hostname, 'string');
    assert.equal(typeof fields.durationMs, 'number');
    assert.deepEqual(
      { ...fields, durationMs: 0 },
      {
        reqId: 'one-line',
        method: 'GET',
        route: '/api/v1/auth/me',
        url: '/api/v1/auth/me?x=1',
        status: 401,
        durationMs: 0,
        msg: 'request completed',
      },
    );
    const failed = await t.app.inject({ url: '/api/v1/_test/boom', headers: { 'x-request-id': 'failing' } });
    assert.equal(failed.statusCode, 500);
    const failedLine = t.logs.find((l) => l.reqId === 'failing' && l.msg === 'request failed');
    assert.equal(failedLine?.level, 50);
  });

  test('metrics count each request once per method, route template and status, with consistent histograms', async () => {
    const scrape = async () => (await t.app.inject({ url: '/metrics' })).body;
    const read = (text: string, line: string): number | undefined => {
      const found = text.split('\n').find((l) => l.startsWith(`${line} `));
      return found === undefined ? undefined : Number(found.slice(line.length + 1));
    };
    const earlier = await scrape();
    for (let i = 0; i < 3; i++) await t.app.inject({ url: '/healthz' });
    await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: {} });
    await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: {} });
    await t.app.inject({ url: '/no/such/path' });
    const text = await scrape();
    const value = (line: string): number => {
      const found = read(text, line);
      assert.ok(found !== undefined, `missing ${line}`);
      return found;
    };
    const added = (line: string): number => value(line) - (read(earlier, line) ?? 0);
    const healthz = 'method="GET",route="/healthz",status_code="200"';
    const login422 = 'method="POST",route="/api/v1/auth/login",status_code="422"';
    assert.equal(added(`http_requests_total{${healthz}}`), 3);
    assert.equal(added(`http_requests_total{${login422}}`), 2);
    assert.equal(added('http_requests_total{method="GET",route="unmatched",status_code="404"}'), 1);
    assert.equal(added(`http_request_duration_seconds_count{${login422}}`), 2);
    for (const labels of [healthz, login422]) {
      const count = value(`http_request_duration_seconds_count{${labels}}`);
      assert.equal(value(`http_requests_total{${labels}}`), count);
      assert.equal(value(`http_request_duration_seconds_bucket{le="+Inf",${labels}}`), count);
      let previous = 0;
      for (const le of [
        '0.001',
        '0.0025',
        '0.005',
        '0.01',
        '0.025',
        '0.05',
        '0.1',
        '0.25',
        '0.5',
        '1',
        '2.5',
        '5',
      ]) {
        const cumulative = value(`http_request_duration_seconds_bucket{le="${le}",${labels}}`);
        assert.ok(cumulative >= previous && cumulative <= count, `bucket ${le} is cumulative`);
        previous = cumulative;
      }
      assert.ok(value(`http_request_duration_seconds_sum{${labels}}`) > 0);
    }
    assert.match(text, /^# TYPE http_request_duration_seconds histogram$/m);
    assert.match(text, /^process_cpu_user_seconds_total /m, 'process metrics still exported');
  });
});
