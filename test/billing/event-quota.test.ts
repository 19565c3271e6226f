/**
 * The event quota on ingestion (contract §7, seed §8) with a plan of 10 events a month (PLANS_FILE):
 * at 120 % ingestion is throttled to 60 requests per minute (429 RATE_LIMITED + Retry-After), at
 * 150 % it is blocked (403 QUOTA_EXCEEDED) on both ingestion endpoints, a plan upgrade lifts the
 * block at once, a new period resets it; 80/100/120/150 % are each notified once, in the app and
 * by e-mail (read from a real SMTP sink). Count limits answer 403 QUOTA_EXCEEDED on create. The
 * throttle's Retry-After is checked at the minute's edges with the counters in memory and in Redis.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  expectError,
  expectStatus,
  login,
  type Page,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { dropPrefix, REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { FAR, FENCE, INSIDE, locate, OUTSIDE, plan, plansFile, setUpTracking } from './helpers.ts';

interface NotificationOut {
  type: string;
  title: string;
  data: { threshold?: number; used?: number; quota?: number };
}

describe('event quota', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let owner: SignedUpUser;
  let token: string;
  let deviceId: string;

  before(async () => {
    sink = await startSmtpSink();
    const file = plansFile([
      plan('free', { events_per_month: 10 }),
      plan('big', { events_per_month: 1_000_000 }),
      plan('tiny', { geofences: 1, devices: 1, webhooks: 1 }),
    ]);
    t = await startIdentityApp({ env: { PLANS_FILE: file, SMTP_URL: sink.url } });
    owner = await signUp(t, 'quota');
    token = owner.tokens.access_token;
    expectStatus(
      await call(t, '/account/settings', { method: 'PATCH', token, body: { email_notifications: true } }),
      200,
    );
    ({ deviceId } = await setUpTracking(t, token));
  });
  after(async () => {
    await t?.close();
    await sink?.close();
  });

  const quotaNotifications = async (): Promise<number[]> => {
    const page = expectStatus<Page<NotificationOut>>(
      await call(t, '/account/notifications', { token, query: { limit: '200' } }),
      200,
    );
    return page.results
      .filter((n) => n.type === 'quota.threshold')
      .map((n) => n.data.threshold ?? 0)
      .sort((a, b) => a - b);
  };
  const usage = async () =>
    expectStatus<{ events: { used: number; quota: number; percent: number } }>(
      await call(t, '/subscriptions/usage', { token }),
      200,
    ).events;

  let inside = false;
  /** One location that produces exactly one event (enter or exit). */
  const oneEvent = async () => {
    inside = !inside;
    const body = expectStatus<{ events: unknown[] }>(
      await locate(t, token, deviceId, inside ? INSIDE : OUTSIDE),
      201,
    );
    assert.equal(body.events.length, 1);
  };

  test('80 % and 100 % are announced once each, in the app and by e-mail', async () => {
    for (let i = 0; i < 7; i++) await oneEvent();
    assert.deepEqual(await quotaNotifications(), []);
    await oneEvent();
    assert.deepEqual(await quotaNotifications(), [80]);
    await oneEvent();
    await oneEvent();
    assert.deepEqual(await quotaNotifications(), [80, 100]);
    assert.deepEqual(await usage(), { used: 10, quota: 10, percent: 100 });
    for (const threshold of [80, 100]) {
      const mail = await sink.waitFor(
        (m) => m.to.includes(owner.email) && m.subject.includes(`${threshold}%`),
      );
      assert.match(mail.text, /of 10 events used/);
    }
  });

  test('at 120 % ingestion is throttled to 60 requests per minute with an honest Retry-After', async () => {
    await oneEvent();
    await oneEvent(); // 12 events: 120 %; the device is outside now
    assert.deepEqual(await quotaNotifications(), [80, 100, 120]);
    t.clock.set(Math.ceil(t.clock.now().getTime() / 1000) * 1000 + 250);
    const t0 = t.clock.now().getTime();
    for (let i = 0; i < 60; i++)
      expectStatus(await locate(t, token, deviceId, FAR), 201, `throttled request ${i + 1}`);
    const throttledAt = async (at: number): Promise<number> => {
      t.clock.set(at);
      const refused = await locate(t, token, deviceId, FAR);
      const body = expectError(refused, 429, 'RATE_LIMITED');
      assert.deepEqual(body.details, { limit: 60, period_seconds: 60, used: 12, quota: 10 });
      return Number(refused.headers['retry-after']);
    };
    // The 60 requests of t0's second leave the minute when that second is a minute old.
    const retryAfter = await throttledAt(t0);
    assert.equal(retryAfter, 60, 'a whole period at t0');
    // The batch endpoint shares the budget.
    expectError(
      await call(t, '/locations/batch', {
        token,
        body: { locations: [{ device_id: deviceId, coordinates: FAR }] },
      }),
      429,
      'RATE_LIMITED',
    );
    assert.equal(await throttledAt(t0 + (retryAfter - 1) * 1000), 1, 'one second before t0 + Retry-After');
    assert.equal(await throttledAt(t0 - 250 + 60_000 - 1), 1, 'one millisecond before the budget frees');
    t.clock.set(t0 + retryAfter * 1000);
    expectStatus(await locate(t, token, deviceId, FAR), 201, 'at t0 + Retry-After');
  });

  test('at 150 % every ingestion request gets 403 until the plan changes or the period ends', async () => {
    t.clock.advance(61_000); // a fresh throttle minute
    await oneEvent();
    await oneEvent();
    await oneEvent(); // 15 events: 150 %
    const blocked = expectError(await locate(t, token, deviceId, FAR), 403, 'QUOTA_EXCEEDED');
    assert.equal(blocked.details?.quota, 10);
    expectError(
      await call(t, '/locations/batch', {
        token,
        body: { locations: [{ device_id: deviceId, coordinates: FAR }] },
      }),
      403,
      'QUOTA_EXCEEDED',
    );
    assert.deepEqual(await quotaNotifications(), [80, 100, 120, 150]);
    // Reads are not ingestion: still allowed.
    expectStatus(await call(t, '/events', { token }), 200);

    // An upgrade lifts the block at once.
    expectStatus(
      await call(t, '/subscriptions/current', { method: 'PUT', token, body: { plan: 'big' } }),
      200,
    );
    const lifted = expectStatus<{ events: unknown[] }>(
      await locate(t, token, deviceId, FAR),
      201,
      'after the upgrade',
    );
    assert.equal(lifted.events.length, 1, 'the device left the fence: an exit (16 events)');
    inside = false;
    // Back on the small plan: blocked again, and nothing is announced a second time.
    expectStatus(
      await call(t, '/subscriptions/current', { method: 'PUT', token, body: { plan: 'free' } }),
      200,
    );
    expectError(await locate(t, token, deviceId, FAR), 403, 'QUOTA_EXCEEDED');
    assert.deepEqual(await quotaNotifications(), [80, 100, 120, 150]);

    // A new period resets the quota.
    t.clock.set('2026-04-01T00:00:00.000Z');
    token = (await login(t, owner.email, owner.password)).access_token; // a month later: a new session
    await oneEvent();
    assert.deepEqual(await usage(), { used: 1, quota: 10, percent: 10 });

    // Each threshold was e-mailed exactly once.
    await sink.waitFor((m) => m.to.includes(owner.email) && m.subject.includes('150%'));
    const quotaMails = sink.messagesTo(owner.email).filter((m) => /Event usage at \d+%/.test(m.subject));
    assert.deepEqual(quotaMails.map((m) => /(\d+)%/.exec(m.subject)?.[1]).sort(), [
      '100',
      '120',
      '150',
      '80',
    ]);
  });

  test('count limits: the plan number of geofences, devices and webhooks, then 403 QUOTA_EXCEEDED', async () => {
    const user = await signUp(t, 'quota-count');
    const userToken = user.tokens.access_token;
    expectStatus(
      await call(t, '/subscriptions/current', { method: 'PUT', token: userToken, body: { plan: 'tiny' } }),
      200,
    );
    expectStatus(
      await call(t, '/geofences', { token: userToken, body: { name: 'one', geometry: FENCE } }),
      201,
    );
    const refused = expectError(
      await call(t, '/geofences', { token: userToken, body: { name: 'two', geometry: FENCE } }),
      403,
      'QUOTA_EXCEEDED',
    );
    assert.deepEqual(refused.details, { resource: 'geofences', limit: 1, count: 1 });
    expectStatus(await call(t, '/devices', { token: userToken, body: { name: 'one' } }), 201);
    expectError(
      await call(t, '/devices', { token: userToken, body: { name: 'two' } }),
      403,
      'QUOTA_EXCEEDED',
    );
    // A batch naming an unknown external id would create a device: refused whole, nothing stored.
    const batch = expectError(
      await call(t, '/locations/batch', {
        token: userToken,
        body: { locations: [{ device_external_id: 'new-van', coordinates: INSIDE }] },
      }),
      403,
      'QUOTA_EXCEEDED',
    );
    assert.deepEqual(batch.details, { resource: 'devices', limit: 1, count: 1 });
    const hook = { name: 'h', url: 'http://127.0.0.1:9/hook' };
    expectStatus(await call(t, '/webhooks', { token: userToken, body: hook }), 201);
    expectError(await call(t, '/webhooks', { token: userToken, body: hook }), 403, 'QUOTA_EXCEEDED');
    const report = expectStatus<{ geofences: unknown; devices: unknown; webhooks: unknown }>(
      await call(t, '/subscriptions/usage', { token: userToken }),
      200,
    );
    assert.deepEqual(report.geofences, { count: 1, limit: 1 });
    assert.deepEqual(report.devices, { count: 1, limit: 1 });
    assert.deepEqual(report.webhooks, { count: 1, limit: 1 });
  });
});

describe('ingestion throttle with the counters in Redis', async () => {
  const reachable = await redisReachable();
  const prefix = uniquePrefix('throttle');
  after(async () => {
    if (reachable) await dropPrefix(prefix);
  });

  test('Retry-After at the edges of the minute', {
    skip: !reachable && 'no Redis at REDIS_TEST_URL',
  }, async () => {
    const file = plansFile([plan('free', { events_per_month: 10 })]);
    const t = await startIdentityApp({ env: { PLANS_FILE: file, REDIS_URL, REDIS_KEY_PREFIX: prefix } });
    try {
      const { tokens } = await signUp(t, 'throttle-redis');
      const token = tokens.access_token;
      const { deviceId } = await setUpTracking(t, token);
      // 12 events (120 %): in and out of the fence six times.
      for (let i = 0; i < 12; i++)
        expectStatus(await locate(t, token, deviceId, i % 2 ? OUTSIDE : INSIDE), 201);
      t.clock.set(Math.ceil(t.clock.now().getTime() / 1000) * 1000);
      const t0 = t.clock.now().getTime();
      for (let i = 0; i < 60; i++)
        expectStatus(await locate(t, token, deviceId, FAR), 201, `request ${i + 1}`);
      const retryAfterAt = async (at: number): Promise<number> => {
        t.clock.set(at);
        const refused = await locate(t, token, deviceId, FAR);
        expectError(refused, 429, 'RATE_LIMITED');
        return Number(refused.headers['retry-after']);
      };
      assert.equal(await retryAfterAt(t0), 60);
      assert.equal(await retryAfterAt(t0 + 59_000), 1);
      assert.equal(await retryAfterAt(t0 + 59_999), 1);
      t.clock.set(t0 + 60_000);
      expectStatus(await locate(t, token, deviceId, FAR), 201, 'at t0 + Retry-After');
    } finally {
      await t.close();
    }
  });
});
