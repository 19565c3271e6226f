/**
 * No address can be flooded and sign-up cannot be scripted at will (contract §2.1):
 * `POST /auth/verify-email/resend` sends at most 3 e-mails per address per hour, and
 * `POST /auth/register` allows REGISTER_RATE_LIMIT (default 10 per hour) per client IP, counted
 * where the login limit is (memory, or Redis shared by every node). Beyond: 429 RATE_LIMIT_EXCEEDED
 * with an honest Retry-After. Time moves on the app's ManualClock; e-mails are read from the outbox.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  expectError,
  expectStatus,
  randomIp,
  type SignedUpUser,
  signUp,
  startIdentityApp,
  uniqueEmail,
} from '../helpers/identity.ts';
import { dropPrefix, REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';
import { limitsShared } from './shared-limits.ts';

const HOUR_S = 3600;

/** Checks the 429 and returns its Retry-After. */
function expectRateLimited(res: LightMyRequestResponse, limit: number, periodSeconds: number, what: string) {
  const body = expectError(res, 429, 'RATE_LIMIT_EXCEEDED', what);
  assert.deepEqual(body.details, { limit, period_seconds: periodSeconds }, `${what}: details`);
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^\d+$/, `${what}: Retry-After is whole seconds`);
  assert.ok(
    Number(retryAfter) >= 1 && Number(retryAfter) <= periodSeconds,
    `${what}: Retry-After ${retryAfter}`,
  );
  return Number(retryAfter);
}

/** Moves the app's clock to the next whole second, so Retry-After values are easy to name. */
function alignClock(t: TestApp): number {
  t.clock.set(Math.ceil(t.clock.now().getTime() / 1000) * 1000);
  return t.clock.now().getTime();
}

const register = (t: TestApp, ip: string, email = uniqueEmail('signup')) =>
  call(t, '/auth/register', { body: { email, password: 'long enough password' }, remoteAddress: ip });

describe('verification e-mail resends', () => {
  let t: TestApp;
  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  const resend = (user: SignedUpUser) =>
    call(t, '/auth/verify-email/resend', { token: user.tokens.access_token, body: {} });

  /** The verification tokens e-mailed to `email`, oldest first. */
  async function verificationTokens(email: string): Promise<string[]> {
    await t.deps.mailer.idle();
    const rows = await t.deps.database.db
      .selectFrom('email_outbox')
      .select(['text_body', 'created_at'])
      .where('to_address', '=', email)
      .where('subject', '=', 'Verify your e-mail address')
      .orderBy('created_at')
      .execute();
    return rows.map((row) => /Your verification token: (\S+)/.exec(row.text_body)?.[1] ?? '');
  }

  test('3 resends an hour; the 4th → 429 with Retry-After and no e-mail; after the hour, allowed again', async () => {
    const user = await signUp(t, 'resend');
    const t0 = alignClock(t);
    for (let i = 1; i <= 3; i++) {
      expectStatus(await resend(user), 202, `resend ${i}`);
      t.clock.advance(1000);
    }
    assert.equal((await verificationTokens(user.email)).length, 4, 'the sign-up e-mail and 3 resends');

    t.clock.set(t0 + 10_000);
    assert.equal(expectRateLimited(await resend(user), 3, HOUR_S, '4th resend'), HOUR_S - 10);
    assert.equal((await verificationTokens(user.email)).length, 4, 'the refusal sent nothing');

    // Honest Retry-After: refused a second before the first resend leaves the window, then allowed.
    t.clock.set(t0 + (HOUR_S - 1) * 1000);
    assert.equal(expectRateLimited(await resend(user), 3, HOUR_S, 'a second early'), 1);
    t.clock.set(t0 + HOUR_S * 1000);
    expectStatus(await resend(user), 202, 'an hour after the first resend');
    const tokens = await verificationTokens(user.email);
    assert.equal(tokens.length, 5);
    expectStatus(
      await call(t, '/auth/verify-email', { body: { token: tokens.at(-1) } }),
      200,
      'the newest link works',
    );
  });

  test('the budget is the address’s, not the session’s: a second session shares it', async () => {
    const user = await signUp(t, 'resend-shared');
    for (let i = 1; i <= 3; i++) expectStatus(await resend(user), 202, `resend ${i}`);
    const again = await call(t, '/auth/login', {
      body: { email: user.email, password: user.password },
      remoteAddress: randomIp(),
    });
    const secondSession = expectStatus<{ access_token: string }>(again, 200).access_token;
    expectRateLimited(
      await call(t, '/auth/verify-email/resend', { token: secondSession, body: {} }),
      3,
      HOUR_S,
      'from another session',
    );
    const other = await signUp(t, 'resend-other');
    expectStatus(await resend(other), 202, 'another address is unaffected');
  });

  test('an address already verified: the resend sends nothing and spends nothing', async () => {
    const user = await signUp(t, 'resend-verified');
    const [token] = await verificationTokens(user.email);
    expectStatus(await call(t, '/auth/verify-email', { body: { token } }), 200, 'verify');
    for (let i = 1; i <= 5; i++) expectStatus(await resend(user), 202, `resend ${i} after verification`);
    assert.equal((await verificationTokens(user.email)).length, 1, 'only the sign-up e-mail');
  });
});

describe('registrations per client IP (default 10 an hour)', () => {
  let t: TestApp;
  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  test('the 11th registration from one IP in an hour → 429 with Retry-After; other IPs unaffected; allowed after the hour', async () => {
    const ip = randomIp();
    const t0 = alignClock(t);
    for (let i = 1; i <= 10; i++) {
      expectStatus(await register(t, ip), 201, `registration ${i}`);
      t.clock.advance(1000);
    }
    const email = uniqueEmail('eleventh');
    assert.equal(
      expectRateLimited(await register(t, ip, email), 10, HOUR_S, '11th registration'),
      HOUR_S - 10,
    );
    expectStatus(await register(t, randomIp()), 201, 'another IP');
    t.clock.set(t0 + HOUR_S * 1000);
    expectStatus(await register(t, ip, email), 201, 'the refused address registers after the hour');
  });
});

describe('REGISTER_RATE_LIMIT', () => {
  let t: TestApp;
  before(async () => {
    t = await startIdentityApp({ env: { REGISTER_RATE_LIMIT: '2/min' } });
  });
  after(async () => t?.close());

  test('configures the budget; a refused duplicate counts like any attempt', async () => {
    const ip = randomIp();
    const email = uniqueEmail('dup');
    expectStatus(await register(t, ip, email), 201, 'first');
    expectError(await register(t, ip, email), 400, 'DUPLICATE_RESOURCE', 'duplicate');
    expectRateLimited(await register(t, ip), 2, 60, '3rd attempt with 2/min');
  });
});

describe('registrations counted in Redis, shared by two nodes', async () => {
  const reachable = await redisReachable();
  if (!reachable)
    assert.equal(process.env.REDIS_TEST_URL, undefined, `REDIS_TEST_URL=${REDIS_URL} is not reachable`);
  const prefix = uniquePrefix('register');
  after(async () => {
    if (reachable) await dropPrefix(prefix);
  });
  if (!reachable) {
    test('needs Redis at REDIS_TEST_URL', { skip: 'no Redis' }, () => {});
    return;
  }

  test('10 registrations from one IP spread over both nodes; the 11th is refused on either', async () => {
    const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix };
    const first = await startIdentityApp({ env });
    // Each node its own database: what they share here is the Redis the limit counts in.
    const second = await startIdentityApp({ env });
    try {
      await limitsShared(first, second);
      const ip = randomIp();
      for (let i = 1; i <= 10; i++)
        expectStatus(await register(i % 2 === 0 ? first : second, ip), 201, `registration ${i}`);
      expectRateLimited(await register(first, ip), 10, HOUR_S, '11th, first node');
      expectRateLimited(await register(second, ip), 10, HOUR_S, '11th, second node');
    } finally {
      await second.close();
      await first.close();
    }
  });
});
