/**
 * Two real server processes (`node src/server.ts`) on one database and one Redis spend one API-key
 * budget between them (contract §0: with REDIS_URL, rate-limit counters are shared by the nodes).
 * A plan change made through one node reaches the other at once over the Redis plan-change bus.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TestDatabase } from '../helpers/database.ts';
import { dropPrefix, REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';
import { createProcessDatabase, type SpawnedServer, spawnServer } from '../helpers/spawned-server.ts';

async function json(res: Response, status: number): Promise<Record<string, unknown>> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

describe('two server processes sharing Redis', async () => {
  const reachable = await redisReachable();
  const prefix = uniquePrefix('shared');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-shared-budget-'));
  const nodes: SpawnedServer[] = [];
  let a = '';
  let b = '';
  let database: TestDatabase | undefined;

  before(async () => {
    if (!reachable) return;
    // A SQLite file, or on PostgreSQL a database of its own, shared by both nodes.
    database = await createProcessDatabase();
    const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix };
    // The first node migrates; the second starts on the migrated database.
    const first = await spawnServer(database, dir, env);
    nodes.push(first);
    const second = await spawnServer(database, dir, env);
    nodes.push(second);
    a = first.base;
    b = second.base;
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    if (reachable) await dropPrefix(prefix);
    await database?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('enforce one budget: 100 requests spread over both, the 101st refused on either', {
    skip: !reachable && 'no Redis',
  }, async () => {
    const post = (base: string, url: string, body: unknown, token?: string) =>
      fetch(`${base}/api/v1${url}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      });
    const email = `shared-${Date.now()}@example.com`;
    await json(await post(a, '/auth/register', { email, password: 'a long password' }), 201);
    const pair = await json(await post(b, '/auth/login', { email, password: 'a long password' }), 200);
    const jwt = String(pair.access_token);
    const created = await json(
      await post(a, '/account/api-keys', { name: 'shared', scopes: ['*'] }, jwt),
      201,
    );
    const key = String(created.key);

    const remaining: number[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${i % 2 === 0 ? a : b}/api/v1/auth/test-api-key`, {
        headers: { 'x-api-key': key },
      });
      await json(res, 200);
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
    // Each node saw the other's requests: the remaining budget fell by one per request overall.
    assert.deepEqual(
      remaining,
      Array.from({ length: 100 }, (_v, i) => 99 - i),
    );
    for (const base of [a, b]) {
      const res = await fetch(`${base}/api/v1/auth/test-api-key`, { headers: { 'x-api-key': key } });
      const body = await json(res, 429);
      assert.equal(body.error_code, 'RATE_LIMIT_EXCEEDED');
      assert.ok(Number(res.headers.get('retry-after')) > 0);
    }

    // A plan change on node A takes effect on node B at once (pub/sub), not after a cache TTL.
    const put = await fetch(`${a}/api/v1/subscriptions/current`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ plan: 'pro' }),
    });
    await json(put, 200);
    let limit = 0;
    for (let i = 0; i < 20 && limit !== 1000; i++) {
      await new Promise((r) => setTimeout(r, 25));
      const res = await fetch(`${b}/api/v1/auth/test-api-key`, { headers: { 'x-api-key': key } });
      limit = Number(res.headers.get('x-ratelimit-limit'));
    }
    assert.equal(limit, 1000, 'node B saw the upgrade within 0.5 s');
  });
});
