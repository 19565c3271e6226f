/**
 * GET /subscriptions/usage (with its daily series, counted in memory and flushed) and invoices of
 * closed periods: plan price plus event overage (every started 1,000 events beyond the quota at the
 * plan's overage price; docs/decisions/011), issued once per workspace and period.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { issueInvoices } from '../../src/billing/invoices.service.ts';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  createApiKey,
  expectStatus,
  login,
  type Page,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { INSIDE, OUTSIDE, plan, plansFile, setUpTracking } from './helpers.ts';

interface UsageOut {
  period_start: string;
  period_end: string;
  events: { used: number; quota: number | null; percent: number | null };
  api_requests: { used_this_hour: number; limit: number | null };
  geofences: { count: number; limit: number | null };
  webhooks: { count: number; limit: number | null };
  devices: { count: number; limit: number | null };
  daily: Array<{ date: string; events: number; api_requests: number }>;
}

interface InvoiceOut {
  id: string;
  period_start: string;
  period_end: string;
  plan: string;
  amount_cents: number;
  line_items: Array<{ kind: string; quantity: number; unit_amount_cents: number; amount_cents: number }>;
  status: string;
}

describe('usage and invoices', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let token: string;

  before(async () => {
    const file = plansFile([
      plan('free', { events_per_month: 10_000 }),
      plan(
        'metered',
        { events_per_month: 700, api_requests_per_hour: 1_000 },
        { price_cents_per_month: 4_900, overage_cents_per_1000_events: 50 },
      ),
    ]);
    t = await startIdentityApp({ env: { PLANS_FILE: file } });
    t.clock.set('2026-03-10T12:00:00.000Z');
    owner = await signUp(t, 'usage');
    token = owner.tokens.access_token;
    expectStatus(
      await call(t, '/subscriptions/current', { method: 'PUT', token, body: { plan: 'metered' } }),
      200,
    );
  });
  after(async () => t?.close());

  /** A batch of `n` locations alternating in and out of the fence: n events. */
  const batch = async (key: string, deviceId: string, n: number, startMs: number) => {
    const locations = Array.from({ length: n }, (_v, i) => ({
      device_id: deviceId,
      coordinates: i % 2 === 0 ? INSIDE : OUTSIDE,
      timestamp: new Date(startMs + i * 1000).toISOString(),
    }));
    const body = expectStatus<{ accepted: number; events: unknown[] }>(
      await call(t, '/locations/batch', { apiKey: key, body: { locations } }),
      200,
    );
    assert.equal(body.events.length, n);
  };

  test('usage: events against the quota, counts against limits, the hour and the days', async () => {
    const { deviceId } = await setUpTracking(t, token);
    const { key } = await createApiKey(t, token, ['locations:write', 'subscriptions:read']);
    const start = t.clock.now().getTime();
    await batch(key, deviceId, 1000, start - 3_600_000);
    await batch(key, deviceId, 1000, start - 1_800_000);

    let usage = expectStatus<UsageOut>(await call(t, '/subscriptions/usage', { apiKey: key }), 200);
    assert.equal(usage.period_start, '2026-03-01T00:00:00.000Z');
    assert.equal(usage.period_end, '2026-04-01T00:00:00.000Z');
    assert.deepEqual(usage.events, { used: 2000, quota: 700, percent: 285.71 });
    assert.deepEqual(usage.api_requests, { used_this_hour: 3, limit: 1000 });
    assert.deepEqual(usage.geofences, { count: 1, limit: 1000 });
    assert.deepEqual(usage.devices, { count: 1, limit: 1000 });
    assert.deepEqual(usage.webhooks, { count: 0, limit: 100 });
    assert.equal(usage.daily.length, 10, 'one entry per day of the period so far');
    // Two batches and this usage request itself.
    assert.deepEqual(usage.daily[9], { date: '2026-03-10', events: 2000, api_requests: 3 });
    assert.deepEqual(usage.daily[0], { date: '2026-03-01', events: 0, api_requests: 0 });

    // Flushed counts and unflushed ones add up, never twice.
    await t.deps.billing.meter.flush();
    t.clock.advance(24 * 3_600_000);
    usage = expectStatus<UsageOut>(await call(t, '/subscriptions/usage', { apiKey: key }), 200);
    assert.equal(usage.daily.length, 11);
    assert.deepEqual(usage.daily[9], { date: '2026-03-10', events: 2000, api_requests: 3 });
    assert.deepEqual(usage.daily[10], { date: '2026-03-11', events: 0, api_requests: 1 });
    assert.equal(usage.api_requests.used_this_hour, 1, 'the rolling hour moved on');
    // JWT requests are not API requests.
    token = (await login(t, owner.email, owner.password)).access_token; // a day later: a new session
    const viaJwt = expectStatus<UsageOut>(await call(t, '/subscriptions/usage', { token }), 200);
    assert.equal(viaJwt.daily[10]?.api_requests, 1);
  });

  test('a closed period is invoiced once: plan price plus overage per started 1,000 events', async () => {
    // A second workspace changes plan mid-month: billed at the plan in force at the period's end.
    const other = await signUp(t, 'usage-other');
    expectStatus(
      await call(t, '/subscriptions/current', {
        method: 'PUT',
        token: other.tokens.access_token,
        body: { plan: 'metered' },
      }),
      200,
    );
    t.clock.set('2026-03-20T00:00:00.000Z');
    let otherToken = (await login(t, other.email, other.password)).access_token;
    expectStatus(
      await call(t, '/subscriptions/current', {
        method: 'PUT',
        token: otherToken,
        body: { plan: 'free' },
      }),
      200,
    );
    // Nothing is invoiced while the period is open.
    const ctx = { db: t.deps.database.db, subscriptions: t.deps.billing.subscriptions, clock: t.clock };
    assert.equal(await issueInvoices(ctx), 0);

    t.clock.set('2026-04-01T00:30:00.000Z');
    assert.equal(await issueInvoices(ctx), 2);
    assert.equal(await issueInvoices(ctx), 0, 'a second run (or another node) issues nothing more');

    token = (await login(t, owner.email, owner.password)).access_token;
    otherToken = (await login(t, other.email, other.password)).access_token;
    const page = expectStatus<Page<InvoiceOut>>(await call(t, '/subscriptions/invoices', { token }), 200);
    assert.equal(page.pagination.total, 1);
    const [invoice] = page.results;
    assert.ok(invoice);
    assert.equal(invoice.period_start, '2026-03-01T00:00:00.000Z');
    assert.equal(invoice.period_end, '2026-04-01T00:00:00.000Z');
    assert.equal(invoice.plan, 'metered');
    assert.equal(invoice.status, 'open');
    // 2,000 events, 700 included: 1,300 over = 2 started thousands × 50 ¢.
    assert.deepEqual(
      invoice.line_items.map(({ kind, quantity, unit_amount_cents, amount_cents }) => ({
        kind,
        quantity,
        unit_amount_cents,
        amount_cents,
      })),
      [
        { kind: 'subscription', quantity: 1, unit_amount_cents: 4_900, amount_cents: 4_900 },
        { kind: 'event_overage', quantity: 2, unit_amount_cents: 50, amount_cents: 100 },
      ],
    );
    assert.equal(invoice.amount_cents, 5_000);

    const otherPage = expectStatus<Page<InvoiceOut>>(
      await call(t, '/subscriptions/invoices', { token: otherToken }),
      200,
    );
    assert.equal(otherPage.results[0]?.plan, 'free');
    assert.equal(otherPage.results[0]?.amount_cents, 0);
  });
});
