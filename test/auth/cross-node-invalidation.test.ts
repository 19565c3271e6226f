/**
 * Two nodes on one database: a logout, a key revocation or the demotion of a key's creator on one
 * must stop the other from accepting what it has cached. With REDIS_URL the invalidation travels over pub/sub at once;
 * without it the other node keeps its cached answer until the TTL (5 s; device tokens 60 s), shown
 * as the control.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/app.ts';
import { CACHE_TTL_MS, DEVICE_TOKEN_CACHE_TTL_MS } from '../../src/auth/authenticator.ts';
import { loadConfig } from '../../src/config.ts';
import { createDeps, type Deps } from '../../src/deps.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET } from '../helpers/app.ts';
import { createTestDatabase, IS_POSTGRES, type TestDatabase } from '../helpers/database.ts';
import { randomIp } from '../helpers/identity.ts';
import { REDIS_URL, redisReachable } from '../helpers/redis.ts';

interface Node {
  app: FastifyInstance;
  deps: Deps;
}

async function startNode(
  url: string,
  schema: string | undefined,
  clock: ManualClock,
  redis: boolean,
): Promise<Node> {
  const config = loadConfig({
    DATABASE_URL: url,
    DATA_DIR: '/tmp/geofence-test-data',
    JWT_SECRET: TEST_JWT_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    LOG_LEVEL: 'silent',
    ...(redis ? { REDIS_URL } : {}),
  });
  const deps = await createDeps(config, {
    clock,
    logger: pino({ level: 'silent' }),
    passwordHash: { memoryKiB: 1024, passes: 1, parallelism: 1 },
    database: schema ? { schema, poolSize: 2 } : {},
  });
  const app = await buildApp(deps);
  await app.ready();
  return { app, deps };
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 2000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

for (const withRedis of [true, false]) {
  describe(`two nodes, ${withRedis ? 'sharing Redis' : 'without Redis'}`, () => {
    let database: TestDatabase;
    let url: string;
    let dir: string | undefined;
    let a: Node;
    let b: Node;
    let skip = false;
    const clock = new ManualClock('2026-03-10T12:00:00.000Z');

    before(async () => {
      if (withRedis && !(await redisReachable())) {
        skip = !process.env.REDIS_TEST_URL;
        if (!skip) throw new Error(`REDIS_TEST_URL=${REDIS_URL} is not reachable`);
        return;
      }
      database = await createTestDatabase();
      url = database.url;
      if (!IS_POSTGRES) {
        dir = fs.mkdtempSync(path.join(os.tmpdir(), 'two-nodes-'));
        url = `sqlite:${path.join(dir, 'shared.db')}`;
      }
      a = await startNode(url, database.schema, clock, withRedis);
      b = await startNode(url, database.schema, clock, withRedis);
    });

    after(async () => {
      if (skip) return;
      await a?.app.close();
      await a?.deps.close();
      await b?.app.close();
      await b?.deps.close();
      await database?.drop();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('logout on one node; the other node stops accepting the access token', async (t) => {
      if (skip) return t.skip('Redis not reachable');
      const email = `cross-${withRedis}-${Date.now()}@example.com`;
      const reg = await a.app.inject({
        method: 'POST',
        url: '/api/v1/auth/register',
        payload: { email, password: 'long password' },
        // The registration limit counts per IP in the shared Redis, across runs too.
        remoteAddress: randomIp(),
      });
      assert.equal(reg.statusCode, 201);
      const login = await a.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email, password: 'long password' },
      });
      const token = login.json().access_token as string;
      const me = () =>
        b.app.inject({ url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}` } });
      assert.equal((await me()).statusCode, 200, 'node B accepts (and caches) the session');

      const logout = await a.app.inject({
        method: 'POST',
        url: '/api/v1/auth/logout',
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(logout.statusCode, 204);
      assert.equal(
        (await a.app.inject({ url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}` } }))
          .statusCode,
        401,
        'node A refuses at once',
      );
      if (withRedis) {
        assert.ok(
          await eventually(async () => (await me()).statusCode === 401),
          'node B refuses within a pub/sub round trip',
        );
      } else {
        assert.equal((await me()).statusCode, 200, 'without Redis node B still answers from its cache');
        clock.advance(CACHE_TTL_MS);
        assert.equal((await me()).statusCode, 401, 'and refuses once the cache entry expires');
      }
    });

    test('an API key revoked on one node stops working on the other', async (t) => {
      if (skip) return t.skip('Redis not reachable');
      const email = `key-${withRedis}-${Date.now()}@example.com`;
      await a.app.inject({
        method: 'POST',
        url: '/api/v1/auth/register',
        payload: { email, password: 'long password' },
        // The registration limit counts per IP in the shared Redis, across runs too.
        remoteAddress: randomIp(),
      });
      const login = await a.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email, password: 'long password' },
      });
      const jwt = login.json().access_token as string;
      const created = await a.app.inject({
        method: 'POST',
        url: '/api/v1/account/api-keys',
        headers: { authorization: `Bearer ${jwt}` },
        payload: { name: 'k', scopes: ['*'] },
      });
      const { id, key } = created.json() as { id: string; key: string };
      const check = () => b.app.inject({ url: '/api/v1/auth/test-api-key', headers: { 'x-api-key': key } });
      assert.equal((await check()).statusCode, 200);
      const revoke = await a.app.inject({
        method: 'DELETE',
        url: `/api/v1/account/api-keys/${id}`,
        headers: { authorization: `Bearer ${jwt}` },
      });
      assert.equal(revoke.statusCode, 204);
      if (withRedis) {
        assert.ok(
          await eventually(async () => (await check()).statusCode === 401),
          'node B refuses the revoked key',
        );
      } else {
        assert.equal((await check()).statusCode, 200, 'without Redis node B still answers from its cache');
        clock.advance(CACHE_TTL_MS);
        assert.equal((await check()).statusCode, 401);
      }
    });

    test('a device token revoked, or its device deleted, on one node stops working on the other', async (t) => {
      if (skip) return t.skip('Redis not reachable');
      const email = `device-${withRedis}-${Date.now()}@example.com`;
      await a.app.inject({
        method: 'POST',
        url: '/api/v1/auth/register',
        payload: { email, password: 'long password' },
        // The registration limit counts per IP in the shared Redis, across runs too.
        remoteAddress: randomIp(),
      });
      const login = await a.app.inject({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { email, password: 'long password' },
      });
      const jwt = login.json().access_token as string;
      const signedIn = { authorization: `Bearer ${jwt}` };
      const newDevice = async (name: string) => {
        const device = await a.app.inject({
          method: 'POST',
          url: '/api/v1/devices',
          headers: signedIn,
          payload: { name },
        });
        const deviceId = device.json().id as string;
        const made = await a.app.inject({
          method: 'POST',
          url: `/api/v1/devices/${deviceId}/tokens`,
          headers: signedIn,
          payload: {},
        });
        return { deviceId, ...(made.json() as { id: string; token: string }) };
      };
      const report = (token: string, lng: number) =>
        b.app.inject({
          method: 'GET',
          url: `/api/v1/ingest/osmand?token=${token}&lat=52.5&lon=${lng}`,
        });
      const revoked = await newDevice('revoked phone');
      const deleted = await newDevice('deleted phone');
      assert.equal(
        (await report(revoked.token, 13.4)).statusCode,
        200,
        'node B accepts (and caches) the token',
      );
      assert.equal(
        (await report(deleted.token, 13.4)).statusCode,
        200,
        'node B accepts (and caches) the token',
      );

      const revoke = await a.app.inject({
        method: 'DELETE',
        url: `/api/v1/devices/${revoked.deviceId}/tokens/${revoked.id}`,
        headers: signedIn,
      });
      assert.equal(revoke.statusCode, 204);
      const remove = await a.app.inject({
        method: 'DELETE',
        url: `/api/v1/devices/${deleted.deviceId}`,
        headers: signedIn,
      });
      assert.equal(remove.statusCode, 204);
      if (withRedis) {
        assert.ok(
          await eventually(async () => (await report(revoked.token, 13.41)).statusCode === 401),
          'node B refuses the revoked token',
        );
        assert.ok(
          await eventually(async () => (await report(deleted.token, 13.41)).statusCode === 401),
          'node B refuses the deleted device’s token',
        );
      } else {
        assert.equal(
          (await report(revoked.token, 13.41)).statusCode,
          200,
          'without Redis node B still answers from its cache',
        );
        // The deleted device is gone from the database: its cached token writes nothing.
        assert.equal((await report(deleted.token, 13.41)).statusCode, 404);
        clock.advance(DEVICE_TOKEN_CACHE_TTL_MS);
        assert.equal((await report(revoked.token, 13.42)).statusCode, 401, 'refused once the entry expires');
        assert.equal((await report(deleted.token, 13.42)).statusCode, 401);
      }
    });

    test('an admin demoted on one node: the other node holds the admin’s key to a member’s reach', async (t) => {
      if (skip) return t.skip('Redis not reachable');
      const password = 'long password';
      const signIn = async (email: string, workspaceId?: string) => {
        const res = await a.app.inject({
          method: 'POST',
          url: '/api/v1/auth/login',
          payload: { email, password, ...(workspaceId ? { workspace_id: workspaceId } : {}) },
        });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().access_token as string;
      };
      const ownerEmail = `demoting-owner-${withRedis}-${Date.now()}@example.com`;
      const adminEmail = `demoted-admin-${withRedis}-${Date.now()}@example.com`;
      const registered = [];
      for (const email of [ownerEmail, adminEmail]) {
        const res = await a.app.inject({
          method: 'POST',
          url: '/api/v1/auth/register',
          payload: { email, password },
          remoteAddress: randomIp(),
        });
        assert.equal(res.statusCode, 201, res.body);
        registered.push(res.json() as { user: { id: string }; workspace: { id: string } });
      }
      const workspaceId = registered[0]?.workspace.id ?? '';
      const adminId = registered[1]?.user.id ?? '';
      const ownerJwt = await signIn(ownerEmail);
      const added = await a.app.inject({
        method: 'POST',
        url: `/api/v1/workspaces/${workspaceId}/members`,
        headers: { authorization: `Bearer ${ownerJwt}` },
        payload: { email: adminEmail, role: 'admin' },
      });
      assert.equal(added.statusCode, 201, added.body);
      const adminJwt = await signIn(adminEmail, workspaceId);
      const created = await a.app.inject({
        method: 'POST',
        url: '/api/v1/account/api-keys',
        headers: { authorization: `Bearer ${adminJwt}` },
        payload: { name: 'admin key', scopes: ['*'] },
      });
      assert.equal(created.statusCode, 201, created.body);
      const { key } = created.json() as { key: string };
      // An owner/admin operation on node B, and a member one: both allowed (and cached) first.
      const adminOperation = () =>
        b.app.inject({ url: '/api/v1/account/api-keys', headers: { 'x-api-key': key } });
      const memberOperation = () => b.app.inject({ url: '/api/v1/devices', headers: { 'x-api-key': key } });
      assert.equal((await adminOperation()).statusCode, 200);

      const demoted = await a.app.inject({
        method: 'PATCH',
        url: `/api/v1/workspaces/${workspaceId}/members/${adminId}`,
        headers: { authorization: `Bearer ${ownerJwt}` },
        payload: { role: 'member' },
      });
      assert.equal(demoted.statusCode, 200, demoted.body);
      assert.equal(
        (await a.app.inject({ url: '/api/v1/account/api-keys', headers: { 'x-api-key': key } })).statusCode,
        403,
        'node A refuses at once',
      );
      if (withRedis) {
        assert.ok(
          await eventually(async () => (await adminOperation()).statusCode === 403),
          'node B refuses within a pub/sub round trip',
        );
      } else {
        assert.equal(
          (await adminOperation()).statusCode,
          200,
          'without Redis node B still answers from its cache',
        );
        clock.advance(CACHE_TTL_MS);
        assert.equal((await adminOperation()).statusCode, 403, 'and refuses once the cache entry expires');
      }
      const refused = await adminOperation();
      assert.equal(refused.json().error_code, 'INSUFFICIENT_PERMISSIONS');
      assert.equal((await memberOperation()).statusCode, 200, 'member operations still work on node B');
    });
  });
}
