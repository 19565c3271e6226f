/**
 * The delivery portal in a real browser against the real server (its in-process job engine, a
 * retry schedule of milliseconds, loopback targets allowed): 250 events of one device fail every
 * attempt at a loopback receiver and fill five pages of dead letters; the receiver recovers and
 * ONE "Retry all matching this filter" requeues all 250 through a server job whose progress the
 * page follows; delivery rows name their device, geofence and origin; a successful delivery is
 * resent and the page moves to the new delivery; the webhook's health panel shows its numbers.
 * Every state passes axe and is photographed at laptop and phone size.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { httpExpect, NO_PLAN_LIMITS } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type DashboardServer, registerAccount } from './dashboard-server.ts';

const EVENTS = 250;
const DEPOT = { lng: 13.4, lat: 52.5 };

interface Listed<T> {
  results: T[];
  pagination: { total: number };
}

/** Answers every request with `status` (503 while "down"). */
class Receiver {
  status = 503;
  hits = 0;
  private readonly server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      this.hits += 1;
      res.writeHead(this.status, { 'content-type': 'text/plain' });
      res.end(this.status === 204 ? undefined : 'receiver down');
    });
  });

  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/portal`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }
}

/** Polls the API until `done` holds (the job engine works in the background), bounded. */
async function until(what: string, done: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    assert.ok(Date.now() < deadline, `never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('dashboard: the delivery portal', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  const receiver = new Receiver();

  before(async () => {
    await receiver.start();
    ({ server, browser } = await startServerAndBrowser({
      ...NO_PLAN_LIMITS,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '50ms',
      WEBHOOK_POLL_INTERVAL: '100ms',
    }));
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await receiver.close();
  });

  test('250 dead letters → one "retry all matching" with progress → resend → health panel', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'portal');
      const token = account.token;
      await httpExpect(201, base, 'POST', '/geofences', {
        token,
        body: {
          name: 'Depot',
          geometry: { type: 'Circle', coordinates: [DEPOT.lng, DEPOT.lat], radius: 200 },
        },
      });
      const webhook = await httpExpect<{ id: string }>(201, base, 'POST', '/webhooks', {
        token,
        body: { name: 'Dispatch', url: receiver.url, rate_limit_per_minute: 10000 },
      });
      // In and out of the Depot: 250 events, each a delivery that fails both attempts.
      const start = Date.now() - 600_000;
      const locations = Array.from({ length: EVENTS + 1 }, (_v, i) => ({
        device_external_id: 'truck-7',
        coordinates: i % 2 === 1 ? [DEPOT.lng, DEPOT.lat] : [DEPOT.lng + 0.1, DEPOT.lat],
        timestamp: new Date(start + i * 1000).toISOString(),
      }));
      const batch = await httpExpect<{ events: unknown[] }>(200, base, 'POST', '/locations/batch', {
        token,
        body: { locations },
      });
      assert.equal(batch.events.length, EVENTS);
      const stats = () =>
        httpExpect<{ total_entries: number; not_requeued: number }>(200, base, 'GET', '/webhooks/dlq/stats', {
          token,
        });
      await until('250 dead letters', async () => (await stats()).total_entries === EVENTS);
      const [device] = (
        await httpExpect<Listed<{ id: string; name: string }>>(200, base, 'GET', '/devices', { token })
      ).results;
      assert.ok(device);

      await page.goto('/webhooks/dead-letters');
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'Dead letters' }).waitFor();
      const table = page.getByRole('table', { name: 'Dead-letter entries, newest first' });
      await table.locator('tbody tr').nth(49).waitFor();
      assert.equal(await table.locator('tbody tr').count(), 50, 'one page of 50; the other 200 on four more');
      await axe(page);
      await screenshot(page, 'portal-dead-letters');

      // The receiver recovers; one server operation retries every entry of every page.
      receiver.status = 204;
      // Every text the progress line shows is recorded: the job may finish between two looks.
      await page.evaluate(`(() => {
        window.__progressSeen = [];
        new MutationObserver(() => {
          const line = document.querySelector('[data-testid="retry-matching-progress"]');
          const text = line ? line.textContent : null;
          if (text && window.__progressSeen.at(-1) !== text) window.__progressSeen.push(text);
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      })()`);
      await page.getByRole('button', { name: 'Retry all matching this filter' }).click();
      const confirm = page.getByRole('group', { name: /Retry every dead letter matching/ });
      await axe(page);
      await confirm.getByRole('button', { name: 'Retry all' }).click();
      const progress = page.getByTestId('retry-matching-progress');
      await page.getByRole('progressbar', { name: /Retry of all matching: 250 entries/ }).waitFor();
      await axe(page);
      await progress
        .filter({ hasText: 'Done: 250 matched, 250 queued, 0 failed.' })
        .waitFor({ timeout: 60_000 });
      await axe(page);
      await screenshot(page, 'portal-retry-matching-done', progress);
      const seen = await page.evaluate<string[]>('window.__progressSeen');
      assert.equal(
        seen[0],
        'Retrying: 250 matched, 0 queued, 0 failed…',
        `progress shown: ${seen.join(' | ')}`,
      );
      assert.equal(seen.at(-1), 'Done: 250 matched, 250 queued, 0 failed.');
      assert.equal((await stats()).not_requeued, 0, 'all 250 requeued');
      const successes = () =>
        httpExpect<Listed<{ id: string; origin: string }>>(
          200,
          base,
          'GET',
          '/webhooks/deliveries?status=success',
          {
            token,
          },
        );
      await until('250 retries delivered', async () => (await successes()).pagination.total === EVENTS);

      // Delivery rows name the device, the geofence and why the delivery exists.
      await page.goto('/webhooks/deliveries');
      const deliveries = page.getByRole('table').first();
      const firstRow = deliveries.locator('tbody tr').first();
      await firstRow.waitFor();
      assert.match(
        (await firstRow.textContent()) ?? '',
        new RegExp(`${device.name} · Depot.*Dead-letter retry`),
      );
      await axe(page);
      await screenshot(page, 'portal-deliveries', firstRow);

      // A successful delivery is resent: the page moves to the new delivery of the same event.
      const [delivered] = (await successes()).results;
      assert.ok(delivered);
      await page.goto(`/webhooks/deliveries/${delivered.id}`);
      await page.getByRole('heading', { level: 1, name: /Delivery/ }).waitFor();
      await axe(page);
      await page.getByRole('button', { name: 'Resend' }).click();
      await page.waitForURL(
        (url) => url.pathname.startsWith('/webhooks/deliveries/') && !url.pathname.endsWith(delivered.id),
      );
      const resentId = new URL(page.url()).pathname.split('/').pop() ?? '';
      const facts = page.locator('dl.delivery-facts');
      await facts.getByText('Resend', { exact: false }).first().waitFor();
      await facts.getByRole('link', { name: 'the earlier delivery' }).waitFor();
      await until('the resend delivered', async () => {
        const d = await httpExpect<{ status: string; source_delivery_id: string; origin: string }>(
          200,
          base,
          'GET',
          `/webhooks/deliveries/${resentId}`,
          { token },
        );
        assert.equal(d.source_delivery_id, delivered.id);
        assert.equal(d.origin, 'resend');
        return d.status === 'success';
      });
      await page.getByRole('heading', { level: 3, name: /Attempt 1/ }).waitFor({ timeout: 15_000 });
      await axe(page);
      await screenshot(page, 'portal-resent');

      // The webhook's health over 24 h: 500 failed attempts, 250 retries and the resend succeeded.
      await page.goto(`/webhooks/${webhook.id}`);
      const health = page.getByRole('region', { name: 'Health, last 24 hours' });
      await health.getByText('of 751 attempts').waitFor();
      const text = (await health.textContent()) ?? '';
      assert.match(text, /Success rate33\.4 % of 751 attempts/);
      assert.match(text, /Duration p50 \/ p95\d+ ms \/ \d+ ms/);
      assert.match(text, /Last failure.*HTTP 503/);
      assert.match(text, /Consecutive failures0/);
      await axe(page);
      await screenshot(page, 'portal-health', health);
    }));
});
