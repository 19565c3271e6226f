/**
 * Contract §0, faults: two server processes sharing a PostgreSQL database and a Redis of the test's own live
 * through a 10-second Redis stop under steady location traffic. No request fails for it (every
 * answer 201, promptly, with its rate-limit headers); limits keep counting in each node's memory
 * meanwhile; when Redis is back, the live stream crosses nodes again and caches that may have
 * missed an invalidation are dropped. Every acknowledged location is stored.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { redisInvalidationBus } from '../../src/auth/cache-invalidation.ts';
import { redisPlanChangeBus } from '../../src/billing/plan-change-bus.ts';
import { DEFAULT_PLANS } from '../../src/billing/plans.ts';
import { IS_POSTGRES, type TestDatabase } from '../helpers/database.ts';
import {
  createProcessDatabase,
  httpCall,
  httpExpect,
  type SpawnedServer,
  spawnServer,
} from '../helpers/spawned-server.ts';
import { startThrowawayRedis, type ThrowawayRedis } from '../helpers/throwaway-services.ts';
import { SseStream } from '../stream/sse-client.ts';
import { assertOnlyStoredOr503, INSIDE, LocationTraffic, type StoredAnswer } from './traffic.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** No request waits on a Redis that is away (the limiter's command timeout is 500 ms; contract §0's 2 s). */
const BOUND_MS = 2_000;

// Several nodes sharing Redis is a PostgreSQL deployment (SQLite is one node): the database is not
// what is under test here, so it runs once, in the PostgreSQL run of the suite.
describe('a Redis outage under traffic', {
  skip: !IS_POSTGRES && 'several nodes share Redis on PostgreSQL: runs in the PostgreSQL run',
}, () => {
  let redis: ThrowawayRedis;
  let database: TestDatabase;
  let dataDir: string;
  let nodes: Array<{ name: string; base: string; server: SpawnedServer }> = [];
  let apiKey: string;
  let devices: string[];
  let traffic: LocationTraffic;

  before(async () => {
    redis = await startThrowawayRedis();
    database = await createProcessDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-redis-faults-'));
    // The free plan with an hourly API budget the traffic never exhausts: every request is still
    // counted (in Redis, or in memory while it is away) and answered with its X-RateLimit headers.
    const plansFile = path.join(dataDir, 'plans.json');
    fs.writeFileSync(
      plansFile,
      JSON.stringify(
        DEFAULT_PLANS.map((p) =>
          p.id === 'free'
            ? { ...p, limits: { ...p.limits, api_requests_per_hour: 1_000_000, devices: 1000 } }
            : p,
        ),
      ),
    );
    const env = { REDIS_URL: redis.url, PLANS_FILE: plansFile, LOGIN_RATE_LIMIT: '3/min' };
    for (const name of ['a', 'b']) {
      const server = await spawnServer(database, dataDir, env);
      nodes.push({ name, base: server.base, server });
    }
  });

  after(async () => {
    await traffic?.stop();
    await Promise.all(nodes.map((n) => n.server.stop()));
    nodes = [];
    await redis?.destroy();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const node = (i: number) => nodes[i] as { name: string; base: string; server: SpawnedServer };

  test('setup: an API key, a circle, devices', async () => {
    const email = `redis-faults-${Date.now()}@example.com`;
    const password = 'correct horse battery staple';
    await httpExpect(201, node(0).base, 'POST', '/auth/register', { body: { email, password } });
    const { access_token: token } = await httpExpect<{ access_token: string }>(
      200,
      node(0).base,
      'POST',
      '/auth/login',
      { body: { email, password } },
    );
    apiKey = (
      await httpExpect<{ key: string }>(201, node(0).base, 'POST', '/account/api-keys', {
        token,
        body: { name: 'faults', scopes: ['*'] },
      })
    ).key;
    await httpExpect(201, node(0).base, 'POST', '/geofences', {
      apiKey,
      body: { name: 'Depot', geometry: { type: 'Circle', coordinates: INSIDE, radius: 500 } },
    });
    devices = [];
    for (let i = 0; i < 4; i++) {
      devices.push(
        (
          await httpExpect<{ id: string }>(201, node(0).base, 'POST', '/devices', {
            apiKey,
            body: { name: `t${i}` },
          })
        ).id,
      );
    }
  });

  test('a 10-second stop costs no request; limits count in memory meanwhile', async () => {
    traffic = new LocationTraffic(
      nodes.map((n) => ({ name: n.name, base: n.base })),
      apiKey,
      devices,
    );
    await sleep(2_000);
    await redis.stop();
    await sleep(1_000);
    // The login limit (3 failures a minute here) still holds, counted in the node's memory.
    const attempts: number[] = [];
    for (let i = 0; i < 4; i++) {
      const answer = await httpCall(node(1).base, 'POST', '/auth/login', {
        body: { email: 'nobody@example.com', password: 'wrong password' },
      });
      attempts.push(answer.status);
    }
    assert.deepEqual(attempts, [401, 401, 401, 429], 'the fourth failure in a minute is refused');
    const limited = await fetch(`${node(0).base}/api/v1/devices?limit=1`, {
      headers: { 'x-api-key': apiKey },
    });
    assert.equal(limited.status, 200);
    assert.ok(
      limited.headers.get('x-ratelimit-remaining') !== null,
      'API-key answers keep their rate-limit headers',
    );
    await sleep(9_000);
    await redis.start();
    await sleep(3_000);
    await traffic.stop();

    for (const n of nodes) assert.equal(n.server.child.exitCode, null, `node ${n.name} is running`);
    assertOnlyStoredOr503(traffic.answers, BOUND_MS);
    assert.deepEqual(
      traffic.answers.filter((a) => a.status !== 201).map((a) => [a.status, a.body]),
      [],
      'no request failed for Redis',
    );
    for (const device of devices) {
      const acknowledged = traffic.answers
        .filter((a) => a.device === device && a.status === 201)
        .map((a) => (a.body as StoredAnswer).location.id);
      const stored = await httpExpect<{ pagination: { total: number } }>(
        200,
        node(0).base,
        'GET',
        `/devices/${device}/locations?limit=1`,
        { apiKey },
      );
      assert.equal(stored.pagination.total, acknowledged.length, 'every acknowledged location is stored');
    }
  });

  test('when Redis is back, the live stream crosses nodes again', async () => {
    const stream = await SseStream.connect(node(0).base, { apiKey });
    try {
      const device = devices[0] as string;
      // Interests are re-exchanged over Redis; a location through node b reaches node a's stream.
      const deadline = Date.now() + 10_000;
      for (let i = 0; ; i++) {
        await httpExpect(201, node(1).base, 'POST', `/devices/${device}/locations`, {
          apiKey,
          body: { coordinates: [INSIDE[0] + i * 1e-5, INSIDE[1]] },
        });
        const seen = stream
          .of('location')
          .some((m) => (m.data as { device_id?: string }).device_id === device);
        if (seen) break;
        if (Date.now() > deadline) assert.fail('node b’s location never reached node a’s stream');
        await sleep(250);
      }
    } finally {
      await stream.close();
    }
  });
});

describe('cross-node buses drop their caches when Redis comes back', () => {
  let redis: ThrowawayRedis;
  before(async () => {
    redis = await startThrowawayRedis();
  });
  after(async () => {
    await redis?.destroy();
  });

  test('auth invalidations and plan changes missed during an outage are made up for by a resync', async () => {
    const logger = pino({ level: 'silent' });
    const connection = new Redis(redis.url, { retryStrategy: () => 100, maxRetriesPerRequest: 1 });
    connection.on('error', () => {});
    const auth = redisInvalidationBus(connection, logger);
    const plans = redisPlanChangeBus(connection, 'test:plan-changes', logger);
    const heard: string[] = [];
    auth.subscribe((message) => heard.push(message.kind));
    plans.onResync(() => heard.push('plans'));
    try {
      await waitUntil(() => connection.status === 'ready');
      await sleep(200);
      assert.deepEqual(heard, [], 'nothing is dropped on the first connection');
      await redis.stop();
      await waitUntil(() => connection.status !== 'ready');
      await redis.start();
      await waitUntil(() => heard.length >= 4);
      assert.deepEqual(heard.sort(), ['all_sessions', 'api_keys', 'device_tokens', 'plans']);
    } finally {
      await auth.close();
      await plans.close();
      connection.disconnect();
    }
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail('condition never held');
    await sleep(50);
  }
}
