/**
 * The API-key request limit through the real app (contract §7, seed §8): per key per rolling hour
 * by plan, with X-RateLimit-* on every API-key response, 429 RATE_LIMIT_EXCEEDED + an honest
 * Retry-After (whole seconds, 1..3600) on the 101st request of the free plan, JWT requests not
 * counted. Time moves on the app's ManualClock; the same tests run with the memory store and with
 * a real Redis.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  createApiKey,
  expectError,
  expectStatus,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { dropPrefix, REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';

const SECOND = 1000;
const MINUTE = 60_000;
const HOUR = 3_600_000;

function header(res: { headers: Record<string, unknown> }, name: string): number {
  return Number(res.headers[name]);
}

async function spend(t: TestApp, key: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++)
    expectStatus(await call(t, '/auth/test-api-key', { apiKey: key }), 200, `request ${i + 1}`);
}

async function suite(label: string, env: () => Record<string, string>): Promise<void> {
  let t: TestApp;
  let owner: SignedUpUser;

  before(async () => {
    t = await startIdentityApp({ env: env() });
    owner = await signUp(t, `rl-${label}`);
  });
  after(async () => t?.close());

  test('the 101st request in an hour on the free plan gets 429 with an honest Retry-After', async () => {
    const { key } = await createApiKey(t, owner.tokens.access_token, ['geofences:read']);
    const start = t.clock.now().getTime();
    // 60 requests now, 40 half an hour later: the window is rolling, not a calendar hour.
    for (let i = 0; i < 60; i++) {
      const res = await call(t, '/auth/test-api-key', { apiKey: key });
      expectStatus(res, 200);
      assert.equal(header(res, 'x-ratelimit-limit'), 100);
      assert.equal(header(res, 'x-ratelimit-remaining'), 99 - i);
      assert.ok(header(res, 'x-ratelimit-reset') > 0);
    }
    t.clock.advance(30 * MINUTE);
    await spend(t, key, 40);

    const refused = await call(t, '/auth/test-api-key', { apiKey: key });
    const body = expectError(refused, 429, 'RATE_LIMIT_EXCEEDED');
    assert.deepEqual(body.details, { limit: 100, period_seconds: 3600 });
    assert.equal(header(refused, 'x-ratelimit-remaining'), 0);
    const retryAfter = header(refused, 'retry-after');
    assert.equal(header(refused, 'x-ratelimit-reset'), retryAfter);
    // The first 60 leave the window exactly one hour after their second began: 30 min from now.
    assert.equal(retryAfter, 30 * 60);
    // Other routes with the same key are refused too (the limit is per key, not per route).
    expectError(await call(t, '/geofences', { apiKey: key }), 429, 'RATE_LIMIT_EXCEEDED');

    // One second before Retry-After: still refused. At Retry-After: accepted, and 60 slots are back.
    t.clock.advance(retryAfter * 1000 - 1000);
    expectError(await call(t, '/auth/test-api-key', { apiKey: key }), 429, 'RATE_LIMIT_EXCEEDED');
    t.clock.advance(1000);
    const again = expectStatus<{ valid: boolean }>(await call(t, '/auth/test-api-key', { apiKey: key }), 200);
    assert.equal(again.valid, true);
    const res = await call(t, '/auth/test-api-key', { apiKey: key });
    assert.equal(header(res, 'x-ratelimit-remaining'), 58);
    assert.equal(t.clock.now().getTime() - start, HOUR);
  });

  // The budget filled at t0, on a second's boundary and half-way through a second: Retry-After is
  // the whole seconds until a request is accepted, 3600 at most and 1 at least (contract §7).
  for (const offsetMs of [0, 500]) {
    test(`Retry-After at the edges of the hour (filled ${offsetMs} ms into a second)`, async () => {
      const { key } = await createApiKey(t, owner.tokens.access_token, ['geofences:read']);
      t.clock.set(Math.ceil(t.clock.now().getTime() / SECOND) * SECOND + offsetMs);
      const t0 = t.clock.now().getTime();
      await spend(t, key, 100);
      const refusedAt = async (at: number): Promise<number> => {
        t.clock.set(at);
        const res = await call(t, '/auth/test-api-key', { apiKey: key });
        expectError(res, 429, 'RATE_LIMIT_EXCEEDED');
        assert.equal(res.headers['retry-after'], res.headers['x-ratelimit-reset']);
        return header(res, 'retry-after');
      };
      const first = await refusedAt(t0);
      assert.equal(first, 3600, 'a whole period at t0');
      // The budget frees when t0's second is an hour old.
      const freeAt = t0 - offsetMs + HOUR;
      assert.equal(await refusedAt(freeAt - SECOND), 1, 'one second before it frees');
      // From t0: refused one second before t0 + Retry-After, accepted at it.
      assert.equal(await refusedAt(t0 + (first - 1) * SECOND), 1, 'one second before t0 + Retry-After');
      assert.equal(await refusedAt(freeAt - 1), 1, 'one millisecond before it frees');
      t.clock.set(t0 + first * SECOND);
      const accepted = await call(t, '/auth/test-api-key', { apiKey: key });
      expectStatus(accepted, 200, 'at t0 + Retry-After');
      assert.equal(header(accepted, 'x-ratelimit-remaining'), 99, 'the whole budget is back');
    });
  }

  test('JWT requests are not counted and carry no X-RateLimit headers', async () => {
    const { key } = await createApiKey(t, owner.tokens.access_token, ['geofences:read']);
    await spend(t, key, 100);
    expectError(await call(t, '/geofences', { apiKey: key }), 429, 'RATE_LIMIT_EXCEEDED');
    for (let i = 0; i < 120; i++) {
      const res = await call(t, '/geofences', { token: owner.tokens.access_token });
      expectStatus(res, 200, `JWT request ${i + 1}`);
      assert.equal(res.headers['x-ratelimit-limit'], undefined);
    }
    // Another key of the same workspace has its own budget.
    const other = await createApiKey(t, owner.tokens.access_token, ['geofences:read']);
    const res = await call(t, '/geofences', { apiKey: other.key });
    expectStatus(res, 200);
    assert.equal(header(res, 'x-ratelimit-remaining'), 99);
    // Errors after authentication carry the headers too (here a scope failure, which counts).
    const forbidden = await call(t, '/devices', { apiKey: other.key, body: { name: 'd' } });
    expectError(forbidden, 403, 'INSUFFICIENT_PERMISSIONS');
    assert.equal(header(forbidden, 'x-ratelimit-remaining'), 98);
  });

  test('a plan upgrade raises the limit at once; usage shows the hour', async () => {
    const user = await signUp(t, `rl-upgrade-${label}`);
    const { key } = await createApiKey(t, user.tokens.access_token, ['subscriptions:read']);
    await spend(t, key, 100);
    expectError(await call(t, '/auth/test-api-key', { apiKey: key }), 429, 'RATE_LIMIT_EXCEEDED');
    const usage = expectStatus<{ api_requests: { used_this_hour: number; limit: number } }>(
      await call(t, '/subscriptions/usage', { token: user.tokens.access_token }),
      200,
    );
    assert.deepEqual(usage.api_requests, { used_this_hour: 100, limit: 100 });
    expectStatus(
      await call(t, '/subscriptions/current', {
        method: 'PUT',
        token: user.tokens.access_token,
        body: { plan: 'pro' },
      }),
      200,
    );
    const res = await call(t, '/auth/test-api-key', { apiKey: key });
    expectStatus(res, 200);
    assert.equal(header(res, 'x-ratelimit-limit'), 1000);
    assert.equal(header(res, 'x-ratelimit-remaining'), 1000 - 101);
  });
}

describe('API-key rate limit, memory store', () => suite('memory', () => ({})));

describe('API-key rate limit, Redis store', async () => {
  const reachable = await redisReachable();
  const prefix = uniquePrefix('api-key');
  after(async () => {
    if (reachable) await dropPrefix(prefix);
  });
  if (!reachable) {
    test('needs Redis at REDIS_TEST_URL', { skip: 'no Redis' }, () => {});
    return;
  }
  await suite('redis', () => ({ REDIS_URL, REDIS_KEY_PREFIX: prefix }));
});
