/**
 * Login (per client IP) and refresh (per user) rate limits (seed §8, contract §0): 429
 * RATE_LIMIT_EXCEEDED with Retry-After and `details: {limit, period_seconds}`; with REDIS_URL the
 * budget is shared by every node. The limiter counts in real time, not by the app's ManualClock.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
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

function expectRateLimited(
  res: LightMyRequestResponse,
  limit: number,
  periodSeconds: number,
  what: string,
): void {
  const body = expectError(res, 429, 'RATE_LIMIT_EXCEEDED', what);
  assert.deepEqual(body.details, { limit, period_seconds: periodSeconds }, `${what}: details`);
  assert.equal(typeof body.detail, 'string');
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^\d+$/, `${what}: Retry-After is whole seconds`);
  assert.ok(
    Number(retryAfter) >= 1 && Number(retryAfter) <= periodSeconds,
    `${what}: Retry-After ${retryAfter}`,
  );
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

describe('login rate limit (per IP)', () => {
  test('5 attempts a minute from one IP are answered; the 6th → 429; another IP is unaffected', () =>
    withApp({}, async (t) => {
      const account = await registerUser(t);
      const ip = randomIp();
      for (const password of [PASSWORD, 'wrong password', PASSWORD, 'wrong again', PASSWORD]) {
        const res = await loginFrom(t, ip, account.email, password);
        assert.equal(res.statusCode, password === PASSWORD ? 200 : 401, res.body);
      }
      expectRateLimited(await loginFrom(t, ip, account.email, PASSWORD), 5, 60, '6th login, right password');
      expectRateLimited(await loginFrom(t, ip, account.email, 'wrong'), 5, 60, '7th login');
      expectStatus(await loginFrom(t, randomIp(), account.email, PASSWORD), 200, 'another IP');
    }));

  test('LOGIN_RATE_LIMIT configures the budget', () =>
    withApp({ env: { LOGIN_RATE_LIMIT: '2/min' } }, async (t) => {
      const account = await registerUser(t);
      const ip = randomIp();
      for (let i = 0; i < 2; i++) expectStatus(await loginFrom(t, ip, account.email, PASSWORD), 200);
      expectRateLimited(await loginFrom(t, ip, account.email, PASSWORD), 2, 60, '3rd login with 2/min');
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

  test('a throttled refresh does not consume the token (it works once the window resets)', () =>
    withApp({ env: { REFRESH_RATE_LIMIT: '2/s' } }, async (t) => {
      const account = await signUp(t, 'throttled');
      // Refresh with the newest token until the limiter refuses (a slow machine may cross into a new
      // 1 s window first); the refused token must then still work once the window has passed.
      let current = account.tokens;
      let throttled = false;
      for (let i = 0; i < 20 && !throttled; i++) {
        const res = await refresh(t, current.refresh_token);
        if (res.statusCode === 429) {
          expectRateLimited(res, 2, 1, 'refresh over 2/s');
          throttled = true;
        } else {
          current = expectStatus<TokenPair>(res, 200, `refresh ${i + 1}`);
        }
      }
      assert.ok(throttled, 'the limiter refused a refresh');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const renewed = expectStatus<TokenPair>(
        await refresh(t, current.refresh_token),
        200,
        'the refused token after the window',
      );
      expectStatus(await call(t, '/auth/me', { token: renewed.access_token }), 200);
    }));
});

const REDIS_URL = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

function redisReachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 6379) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

describe('login rate limit shared through Redis', () => {
  test('two app instances sharing Redis enforce one login budget per IP', async (ctx) => {
    if (!(await redisReachable(REDIS_URL))) {
      // Explicitly configured Redis must be there; the default local one may be absent.
      assert.equal(process.env.REDIS_TEST_URL, undefined, `REDIS_TEST_URL=${REDIS_URL} is not reachable`);
      ctx.skip(`Redis not reachable at ${REDIS_URL}`);
      return;
    }
    const env = { REDIS_URL };
    const first = await startIdentityApp({ env });
    const second = await startIdentityApp({ env });
    // A fresh address per run: counters left in Redis by earlier runs cannot interfere.
    const ip = randomIp();
    const otherIp = randomIp();
    try {
      const one = await registerUser(first);
      const two = await registerUser(second);
      for (const [t, account] of [
        [first, one],
        [second, two],
        [first, one],
        [second, two],
        [first, one],
      ] as const) {
        expectStatus(await loginFrom(t, ip, account.email, PASSWORD), 200, 'within the shared budget');
      }
      expectRateLimited(await loginFrom(second, ip, two.email, PASSWORD), 5, 60, '6th login, second node');
      expectRateLimited(await loginFrom(first, ip, one.email, PASSWORD), 5, 60, '7th login, first node');
      expectStatus(await loginFrom(first, otherIp, one.email, PASSWORD), 200, 'another IP');
      await login(second, two.email, PASSWORD);
    } finally {
      await first.deps.redis?.del(`rl:login:${ip}`, `rl:login:${otherIp}`);
      await first.close();
      await second.close();
    }
  });
});
