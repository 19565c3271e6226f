import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('probes', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ env: { METRICS_TOKEN: 'metrics-secret' } });
  });
  after(async () => t.close());

  test('GET /healthz answers 200', async () => {
    const res = await t.app.inject({ url: '/healthz' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'ok' });
  });

  test('GET /readyz answers 200 while the database is reachable', async () => {
    const res = await t.app.inject({ url: '/readyz' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'ready', database: 'up' });
  });

  test('GET /metrics needs the metrics token and reports per-route counts and latency', async () => {
    await t.app.inject({ url: '/healthz' });
    const denied = await t.app.inject({ url: '/metrics' });
    assert.equal(denied.statusCode, 401);
    const res = await t.app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-secret' } });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-type'] as string, /text\/plain/);
    assert.match(res.body, /http_requests_total\{method="GET",route="\/healthz",status_code="200"\} \d+/);
    assert.match(res.body, /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/healthz"/);
    assert.match(res.body, /process_cpu_user_seconds_total/);
  });
});

describe('readiness when the database is gone', () => {
  test('GET /readyz answers 503', async () => {
    const t = await startTestApp();
    try {
      await t.deps.database.close();
      const res = await t.app.inject({ url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), { status: 'unavailable', database: 'down' });
    } finally {
      await t.close();
    }
  });
});
