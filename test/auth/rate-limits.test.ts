/**
 * Login (failed attempts per client IP, contract §2.2) and refresh (per user) rate limits (seed §8,
 * contract §0 and §7): 429
 * RATE_LIMIT_EXCEEDED with Retry-After (the whole seconds until a request is accepted, 1..period)
 * and `details: {limit, period_seconds}`; with REDIS_URL the budget is shared by every node. Time
 * moves on the app's ManualClock, with the counters in memory and in Redis.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  expectError,
  expectStatus,
  login,
  PASSWORD,
  randomIp,
  registerUser,
  signUp,
  startIdentityApp,
  type TokenPair,
} from '../helpers/identity.ts';
import { dropPrefix, REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';
import { countingInRedis, limitsShared } from './shared-limits.ts';

/** Checks the 429 and returns its Retry-After. */
function expectRateLimited(
  res: LightMyRequestResponse,
  limit: number,
  periodSeconds: number,
  what: string,
): number {
  const body = expectError(res, 429, 'RATE_LIMIT_EXCEEDED', what);
  assert.deepEqual(body.details, { limit, period_seconds: periodSeconds }, `${what}: details`);
  assert.equal(typeof body.detail, 'string');
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^\d+$/, `${what}: Retry-After is whole seconds`);
  assert.ok(
    Number(retryAfter) >= 1 && Number(retryAfter) <= periodSeconds,
    `${what}: Retry-After ${retryAfter}`,
  );
  return Number(retryAfter);
}

/** Moves the app's clock to the next whole second (plus `offsetMs`), so edges are easy to name. */
function alignClock(t: TestApp, offsetMs = 0): number {
  t.clock.set(Math.ceil(t.clock.now().getTime() / 1000) * 1000 + offsetMs);
  return t.clock.now().getTime();
}

const loginFrom = (t: TestApp, ip: string, email: string, password: string) =>
  call(t, '/auth/login', { body: { email, password }, remoteAddress: ip });

const refresh = (t: TestApp, refreshToken: string, ip?: string) =>
  call(t, '/auth/refresh', { body: { refresh_token: refreshToken }, ...(ip ? { remoteAddress: ip } : {}) });

async function withApp(options: Parameters<typeof startIdentityApp>[0], body: (t: TestApp) => Promise<void>) {
  const t = await startIdentityApp(options);
  try {
    await body(t);
  } finally {
    await t.close();
  }
}

const WRONG = 'not the password';

describe('login rate limit (failed attempts per IP)', () => {
  test('successful sign-ins do not use the budget; after 5 failures the 6th → 429, the right password included', () =>
    withApp({}, async (t) => {
      const account = await registerUser(t);
      const ip = randomIp();
      for (let i = 1; i <= 8; i++)
        expectStatus(await loginFrom(t, ip, account.email, PASSWORD), 200, `successful sign-in ${i}`);
      for (let i = 1; i <= 5; i++) {
        // A wrong password and an unknown address are alike: both are guesses.
        const email = i % 2 === 0 ? `nobody-${i}@example.com` : account.email;
        expectError(await loginFrom(t, ip, email, WRONG), 401, undefined, `failure ${i}`);
      }
      expectRateLimited(
        await loginFrom(t, ip, account.email, PASSWORD),
        5,
        60,
        '6th attempt, right password',
      );
      expectRateLimited(await loginFrom(t, ip, account.email, WRONG), 5, 60, '7th attempt, wrong password');
      expectStatus(await loginFrom(t, randomIp(), account.email, PASSWORD), 200, 'another IP');
    }));

  test('failures interleaved with successes: only the failures count', () =>
    withApp({}, async (t) => {
      const account = await registerUser(t);
      const ip = randomIp();
      for (let i = 1; i <= 4; i++) {
        expectError(await loginFrom(t, ip, account.email, WRONG), 401, undefined, `failure ${i}`);
        expectStatus(await loginFrom(t, ip, account.email, PASSWORD), 200, `success after failure ${i}`);
      }
      expectError(await loginFrom(t, ip, account.email, WRONG), 401, undefined, 'failure 5');
      expectRateLimited(await loginFrom(t, ip, account.email, PASSWORD), 5, 60, 'after the 5th failure');
    }));

  test('answers that are not wrong credentials are not counted (a workspace the user is not in → 404)', () =>
    withApp({}, async (t) => {
      const account = await registerUser(t);
      const ip = randomIp();
      for (let i = 1; i <= 7; i++) {
        const res = await call(t, '/auth/login', {
          body: {
            email: account.email,
            password: PASSWORD,
            workspace_id: '01900000-0000-7000-8000-000000000000',
          },
          remoteAddress: ip,
        });
        expectError(res, 404, 'NOT_FOUND', `foreign workspace ${i}`);
      }
      expectStatus(await loginFrom(t, ip, account.email, PASSWORD), 200, 'the budget is untouched');
    }));

  test('parallel guesses cannot overshoot: of 20 at once from one IP at most 5 are checked', () =>
    withApp({}, async (t) => {
      const account = await registerUser(t);
      const ip = randomIp();
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => loginFrom(t, ip, account.email, WRONG)),
      );
      const statuses = answers.map((res) => res.statusCode);
      const checked = statuses.filter((s) => s === 401).length;
      assert.ok(checked >= 1 && checked <= 5, `401s: ${checked} of ${statuses.join(',')}`);
      assert.equal(statuses.filter((s) => s === 429).length, 20 - checked, statuses.join(','));
      for (const res of answers.filter((r) => r.statusCode === 429)) expectRateLimited(res, 5, 60, 'burst');
      // Once they are over, the failures are what counts: 5 - checked attempts are left.
      for (let i = 0; i < 5 - checked; i++)
        expectError(await loginFrom(t, ip, account.email, WRONG), 401, undefined, `sequential failure ${i}`);
      expectRateLimited(await loginFrom(t, ip, account.email, PASSWORD), 5, 60, 'after 5 failures in all');
    }));

  test('LOGIN_RATE_LIMIT configures the budget', () =>
    withApp({ env: { LOGIN_RATE_LIMIT: '2/min' } }, async (t) => {
      const account = await registerUser(t);
      const ip = randomIp();
      for (let i = 0; i < 2; i++) expectError(await loginFrom(t, ip, account.email, WRONG), 401, undefined);
      expectRateLimited(await loginFrom(t, ip, account.email, PASSWORD), 2, 60, '3rd attempt with 2/min');
    }));
});

describe('refresh rate limit (per user)', () => {
  test('10 refreshes a minute per user; the 11th → 429, from any IP; other users are unaffected', () =>
    withApp({}, async (t) => {
      const busy = await signUp(t, 'busy');
      const calm = await signUp(t, 'calm');
      let pair: TokenPair = busy.tokens;
      for (let i = 1; i <= 10; i++) {
        pair = expectStatus<TokenPair>(await refresh(t, pair.refresh_token, randomIp()), 200, `refresh ${i}`);
      }
      expectRateLimited(await refresh(t, pair.refresh_token), 10, 60, '11th refresh');
      expectRateLimited(await refresh(t, pair.refresh_token, randomIp()), 10, 60, '12th refresh, another IP');
      expectStatus(await refresh(t, calm.tokens.refresh_token), 200, 'another user');
    }));

  test('a throttled refresh does not consume the token (it works at t0 + Retry-After)', () =>
    withApp({ env: { REFRESH_RATE_LIMIT: '2/min' } }, async (t) => {
      const account = await signUp(t, 'throttled');
      const t0 = alignClock(t, 700);
      let current = account.tokens;
      for (let i = 1; i <= 2; i++)
        current = expectStatus<TokenPair>(await refresh(t, current.refresh_token), 200, `refresh ${i}`);
      const retryAfter = expectRateLimited(
        await refresh(t, current.refresh_token),
        2,
        60,
        'refresh over 2/min',
      );
      assert.equal(retryAfter, 60, "ceil(59.3 s): the requests of t0's second leave a minute after it began");
      t.clock.set(t0 + (retryAfter - 1) * 1000);
      assert.equal(expectRateLimited(await refresh(t, current.refresh_token), 2, 60, 'a second early'), 1);
      t.clock.set(t0 + retryAfter * 1000);
      const renewed = expectStatus<TokenPair>(
        await refresh(t, current.refresh_token),
        200,
        'the refused token at t0 + Retry-After',
      );
      expectStatus(await call(t, '/auth/me', { token: renewed.access_token }), 200);
    }));
});

/** The login limit's edges, with the counters in memory or in Redis (`env`). */
function loginEdges(env: () => Record<string, string>): void {
  test('Retry-After at the edges of the minute: 60 at t0, 1 just before, accepted at t0 + Retry-After', () =>
    withApp({ env: env() }, async (t) => {
      await countingInRedis(t, env());
      const account = await registerUser(t);
      const ip = randomIp();
      const t0 = alignClock(t);
      for (let i = 0; i < 5; i++) expectError(await loginFrom(t, ip, account.email, WRONG), 401, undefined);
      const refusedAt = async (at: number): Promise<number> => {
        t.clock.set(at);
        return expectRateLimited(
          await loginFrom(t, ip, account.email, PASSWORD),
          5,
          60,
          `login at +${at - t0} ms`,
        );
      };
      const retryAfter = await refusedAt(t0);
      assert.equal(retryAfter, 60);
      assert.equal(await refusedAt(t0 + 30_000), 30);
      assert.equal(await refusedAt(t0 + (retryAfter - 1) * 1000), 1, 'one second before t0 + Retry-After');
      assert.equal(await refusedAt(t0 + 60_000 - 1), 1, 'one millisecond before');
      t.clock.set(t0 + retryAfter * 1000);
      expectStatus(await loginFrom(t, ip, account.email, PASSWORD), 200, 'at t0 + Retry-After');
      // The failures have left the window and the success counted nothing: 5 attempts again.
      for (let i = 0; i < 5; i++) expectError(await loginFrom(t, ip, account.email, WRONG), 401, undefined);
      expectRateLimited(await loginFrom(t, ip, account.email, PASSWORD), 5, 60, 'after 5 new failures');
    }));
}

describe('login rate limit at the window edges, memory store', () => loginEdges(() => ({})));

describe('login rate limit shared through Redis', async () => {
  const reachable = await redisReachable();
  // Explicitly configured Redis must be there; the default local one may be absent.
  if (!reachable)
    assert.equal(process.env.REDIS_TEST_URL, undefined, `REDIS_TEST_URL=${REDIS_URL} is not reachable`);
  const prefix = uniquePrefix('login');
  after(async () => {
    if (reachable) await dropPrefix(prefix);
  });
  if (!reachable) {
    test('needs Redis at REDIS_TEST_URL', { skip: 'no Redis' }, () => {});
    return;
  }

  loginEdges(() => ({ REDIS_URL, REDIS_KEY_PREFIX: prefix }));

  test('two app instances sharing Redis enforce one budget of failed sign-ins per IP', async () => {
    const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix };
    const first = await startIdentityApp({ env });
    const second = await startIdentityApp({ env });
    // A fresh address per run: counters left in Redis by earlier runs cannot interfere.
    const ip = randomIp();
    const otherIp = randomIp();
    try {
      await limitsShared(first, second);
      const one = await registerUser(first);
      const two = await registerUser(second);
      for (const [t, account] of [
        [first, one],
        [second, two],
        [first, one],
        [second, two],
        [first, one],
      ] as const) {
        expectStatus(await loginFrom(t, ip, account.email, PASSWORD), 200, 'a success counts nothing');
        expectError(await loginFrom(t, ip, account.email, WRONG), 401, undefined, 'within the shared budget');
      }
      expectRateLimited(await loginFrom(second, ip, two.email, PASSWORD), 5, 60, '6th attempt, second node');
      expectRateLimited(await loginFrom(first, ip, one.email, PASSWORD), 5, 60, '7th attempt, first node');
      expectStatus(await loginFrom(first, otherIp, one.email, PASSWORD), 200, 'another IP');
      await login(second, two.email, PASSWORD);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
