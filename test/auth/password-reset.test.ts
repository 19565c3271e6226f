/**
 * Password-reset requests (contract §2.1): 202 with the same answer for every address, the e-mail
 * after the answer; at most 3 reset e-mails per address per hour (beyond: still 202, no e-mail);
 * 20 requests per client IP per hour (beyond: 429 RATE_LIMIT_EXCEEDED with Retry-After). Time moves
 * on the app's ManualClock; e-mails are read from the outbox.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  type ErrorBody,
  expectError,
  expectStatus,
  login,
  randomIp,
  signUp,
  startIdentityApp,
  uniqueEmail,
} from '../helpers/identity.ts';
import { dropPrefix, REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';
import { countingInRedis } from './shared-limits.ts';

const HOUR_MS = 3_600_000;

function requestReset(t: TestApp, email: string, ip: string): Promise<LightMyRequestResponse> {
  return call(t, '/auth/password-reset/request', { body: { email }, remoteAddress: ip });
}

/** Reset e-mails kept for `email`, once every queued reset has been handled. */
async function resetMails(t: TestApp, email: string): Promise<number> {
  await t.deps.passwordResets.idle();
  await t.deps.mailer.idle();
  const rows = await t.deps.database.db
    .selectFrom('email_outbox')
    .select('id')
    .where('to_address', '=', email)
    .where('subject', '=', 'Reset your password')
    .execute();
  return rows.length;
}

/** The answer as a client sees it, minus what differs on every response. */
function visible(res: LightMyRequestResponse) {
  const { date: _date, 'x-request-id': _requestId, ...headers } = res.headers;
  return { status: res.statusCode, headers, body: res.body };
}

function ipLimitSuite(label: string, env: () => Record<string, string>) {
  describe(`password-reset request limits (${label})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startIdentityApp({ env: env() });
      await countingInRedis(t, env());
    });
    after(async () => t?.close());

    test('the 21st request from one IP → 429 with Retry-After; other IPs unaffected; accepted once the window has passed', async () => {
      const ip = randomIp();
      for (let i = 0; i < 20; i++) {
        const res = await requestReset(t, uniqueEmail('ip'), ip);
        assert.equal(res.statusCode, 202, `request ${i + 1}: ${res.body}`);
      }
      const refused = await requestReset(t, uniqueEmail('ip'), ip);
      const body: ErrorBody = expectError(refused, 429, 'RATE_LIMIT_EXCEEDED', '21st request');
      assert.deepEqual(body.details, { limit: 20, period_seconds: 3600 });
      const retryAfter = Number(refused.headers['retry-after']);
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600,
        `Retry-After ${retryAfter}`,
      );
      assert.equal((await requestReset(t, uniqueEmail('ip'), randomIp())).statusCode, 202, 'another IP');

      // Retry-After is honest: a second early is still refused, at Retry-After the window has passed.
      t.clock.advance((retryAfter - 1) * 1000);
      expectError(await requestReset(t, uniqueEmail('ip'), ip), 429, 'RATE_LIMIT_EXCEEDED', 'a second early');
      t.clock.advance(1000);
      assert.equal((await requestReset(t, uniqueEmail('ip'), ip)).statusCode, 202, 'at Retry-After');
    });

    test('26 requests for one address → exactly 3 e-mails; the hour after, e-mails again', async () => {
      const account = await signUp(t, 'reset-budget');
      const ips = [randomIp(), randomIp()];
      for (let i = 0; i < 26; i++) {
        // 20 from the first address, the rest from the second: under each IP's budget.
        const res = await requestReset(t, account.email, ips[i < 20 ? 0 : 1] ?? '');
        assert.equal(res.statusCode, 202, `request ${i + 1}: ${res.body}`);
      }
      assert.equal(await resetMails(t, account.email), 3);

      t.clock.advance(HOUR_MS + 60_000);
      assert.equal((await requestReset(t, account.email, randomIp())).statusCode, 202);
      assert.equal(await resetMails(t, account.email), 4, 'the address has a budget again');
    });
  });
}

ipLimitSuite('memory store', () => ({}));

describe('password-reset limits with Redis', async () => {
  const reachable = await redisReachable();
  const prefix = uniquePrefix('pwreset');
  after(async () => {
    if (reachable) await dropPrefix(prefix);
  });
  if (!reachable) {
    test('Redis not reachable at REDIS_TEST_URL', { skip: true }, () => {});
    return;
  }
  ipLimitSuite('Redis store', () => ({ REDIS_URL, REDIS_KEY_PREFIX: prefix }));
});

describe('password-reset answers reveal nothing', () => {
  let t: TestApp;
  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  test('a known and an unknown address get byte-identical answers; only the known one gets an e-mail', async () => {
    const account = await signUp(t, 'reset-known');
    const unknown = uniqueEmail('reset-unknown');
    const ip = randomIp();
    const forKnown = await requestReset(t, account.email, ip);
    const forUnknown = await requestReset(t, unknown, ip);
    assert.equal(forKnown.statusCode, 202);
    assert.deepEqual(visible(forUnknown), visible(forKnown));
    assert.equal(forKnown.body, '{"status":"accepted"}');
    assert.equal(await resetMails(t, account.email), 1);
    assert.equal(await resetMails(t, unknown), 0);
  });
});

describe('a confirmed reset uses up the other reset tokens', () => {
  let t: TestApp;
  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  /** The reset tokens e-mailed to `email`, oldest first. */
  async function resetTokens(email: string): Promise<string[]> {
    await t.deps.passwordResets.idle();
    await t.deps.mailer.idle();
    const rows = await t.deps.database.db
      .selectFrom('email_outbox')
      .select(['text_body', 'created_at'])
      .where('to_address', '=', email)
      .where('subject', '=', 'Reset your password')
      .orderBy('created_at')
      .execute();
    return rows.map((row) => /Your reset token: (\S+)/.exec(row.text_body)?.[1] ?? '');
  }

  const confirm = (token: string, password: string) =>
    call(t, '/auth/password-reset/confirm', { body: { token, password } });

  test('two outstanding tokens: using one makes the other give 400 INVALID_TOKEN; so does a third, newer one', async () => {
    const account = await signUp(t, 'reset-twice');
    for (let i = 0; i < 3; i++) {
      assert.equal((await requestReset(t, account.email, randomIp())).statusCode, 202);
      t.clock.advance(1000);
    }
    const [first, second, third] = await resetTokens(account.email);
    assert.ok(first && second && third, 'three distinct tokens e-mailed');
    assert.equal(new Set([first, second, third]).size, 3);

    expectStatus(await confirm(second, 'the second new password'), 204, 'confirm with the second token');
    for (const [label, token] of [
      ['the older token', first],
      ['the newer token', third],
    ] as const) {
      expectError(await confirm(token, 'someone else’s password'), 400, 'INVALID_TOKEN', label);
    }
    // The password set is the one of the token used, and sessions from before are gone.
    await login(t, account.email, 'the second new password');
    expectError(
      await call(t, '/auth/me', { token: account.tokens.access_token }),
      401,
      undefined,
      'old session',
    );
  });

  test('another user’s outstanding token is not touched', async () => {
    const one = await signUp(t, 'reset-one');
    const other = await signUp(t, 'reset-other');
    for (const account of [one, other])
      assert.equal((await requestReset(t, account.email, randomIp())).statusCode, 202);
    const [oneToken] = await resetTokens(one.email);
    const [otherToken] = await resetTokens(other.email);
    expectStatus(await confirm(oneToken ?? '', 'one new password'), 204);
    expectStatus(await confirm(otherToken ?? '', 'other new password'), 204, 'the other user’s token');
  });
});
