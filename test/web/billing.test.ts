/**
 * The Plan and usage page in a real browser against the real server: the owner sees the plan, the
 * usage of this period against every limit, the daily chart (a canvas) with its numbers as a
 * table, changes the plan and sees the new limits at once, and opens an invoice's line items on the
 * second page of invoices. A member of the same workspace reads the plans but gets the refusal
 * instead of the change form. Invoices of closed periods are back-dated rows written straight into
 * the server's database (the server issues them only after a month closes).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { insertInvoiceIfAbsent, type LineItem } from '../../src/billing/invoices.repository.ts';
import { parseDatabaseUrl } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import type { TestDatabase } from '../helpers/database.ts';
import {
  createProcessDatabase,
  httpExpect,
  type SpawnedServer,
  spawnServer,
} from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn } from './browser.ts';
import { ensureDashboardBuilt } from './build.ts';
import { launchBrowser } from './chromium.ts';
import { type Account, registerAccount } from './dashboard-server.ts';

interface PlanOut {
  id: string;
  name: string;
  limits: Record<
    'api_requests_per_hour' | 'events_per_month' | 'geofences' | 'webhooks' | 'devices',
    number | null
  >;
}
interface UsageOut {
  daily: Array<{ date: string; events: number; api_requests: number }>;
}

/** Twelve invoices a page: fourteen closed months make a second page of two. */
const MONTHS = 14;

/** The months before the current one, newest first, as [start, end) in UTC. */
function closedMonths(count: number): Array<{ id: string; start: Date; end: Date }> {
  const now = new Date();
  return Array.from({ length: count }, (_v, i) => {
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i - 1, 1));
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - i, 1));
    return { id: start.toISOString().slice(0, 7), start, end };
  });
}

function monthName(start: Date): string {
  return new Intl.DateTimeFormat('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(start);
}

async function openBilling(page: Page, account: Account): Promise<void> {
  await page.goto('/login?next=%2Fbilling');
  await signIn(page, account.email, account.password);
  await page.getByRole('heading', { level: 1, name: 'Plan and usage' }).waitFor();
  await page.getByRole('heading', { level: 2, name: 'Current plan' }).waitFor();
}

/** The limits the page says the workspace has, by their names. */
async function shownLimits(page: Page): Promise<Record<string, string>> {
  const pairs = await page
    .getByLabel('Limits of your plan')
    .locator('div')
    .evaluateAll((divs) =>
      divs.map((d) => [d.querySelector('dt')?.textContent ?? '', d.querySelector('dd')?.textContent ?? '']),
    );
  return Object.fromEntries(pairs);
}

function expectedLimits(plan: PlanOut): Record<string, string> {
  const f = (n: number | null) => (n === null ? 'No limit' : n.toLocaleString('en-GB'));
  return {
    'Events per month': f(plan.limits.events_per_month),
    'API requests per hour (per key)': f(plan.limits.api_requests_per_hour),
    Geofences: f(plan.limits.geofences),
    Webhooks: f(plan.limits.webhooks),
    Devices: f(plan.limits.devices),
  };
}

describe('dashboard: plan and usage', () => {
  let database: TestDatabase;
  let dataDir: string;
  let server: SpawnedServer;
  let browser: Browser;
  let base: string;
  let plans: PlanOut[];

  before(async () => {
    await ensureDashboardBuilt();
    database = await createProcessDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-web-billing-'));
    [server, browser] = await Promise.all([
      spawnServer(database, dataDir, { LOGIN_RATE_LIMIT: '1000/min', REFRESH_RATE_LIMIT: '1000/min' }),
      launchBrowser(),
    ]);
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** Back-dated invoices of the workspace: plan price and, every other month, event overage. */
  async function writeInvoices(workspaceId: string): Promise<void> {
    const target = parseDatabaseUrl(database.url);
    assert.ok(target);
    const handle = openDatabase(target);
    try {
      for (const [i, month] of closedMonths(MONTHS).entries()) {
        const lineItems: LineItem[] = [
          {
            kind: 'subscription',
            description: `Pro plan, ${month.id}`,
            quantity: 1,
            unit_amount_cents: 4_900,
            amount_cents: 4_900,
          },
        ];
        if (i % 2 === 0) {
          lineItems.push({
            kind: 'event_overage',
            description: `1500 events over the 250000 included (2 × 1,000 events)`,
            quantity: 2,
            unit_amount_cents: 50,
            amount_cents: 100,
          });
        }
        await insertInvoiceIfAbsent(handle.db, {
          id: crypto.randomUUID(),
          workspaceId,
          period: month.id,
          periodStart: month.start,
          periodEnd: month.end,
          plan: 'pro',
          amountCents: lineItems.reduce((sum, item) => sum + item.amount_cents, 0),
          lineItems,
          status: 'open',
          createdAt: month.end,
        });
      }
    } finally {
      await handle.close();
    }
  }

  test('the owner: usage, the chart and its table, a plan change with its new limits, line items', () =>
    inPage(browser, base, async (page) => {
      const owner = await registerAccount(base, 'plan-owner');
      plans = (
        await httpExpect<{ results: PlanOut[] }>(200, base, 'GET', '/subscriptions/plans', {
          token: owner.token,
        })
      ).results;
      // A little usage today: a geofence, a device entering it through an API key (an API request).
      await httpExpect(201, base, 'POST', '/geofences', {
        token: owner.token,
        body: { name: 'Depot', geometry: { type: 'Circle', coordinates: [13.4, 52.52], radius: 200 } },
      });
      const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
        token: owner.token,
        body: { name: 'Van' },
      });
      const { key } = await httpExpect<{ key: string }>(201, base, 'POST', '/account/api-keys', {
        token: owner.token,
        body: { name: 'tracker', scopes: ['locations:write'] },
      });
      for (const coordinates of [
        [13.4, 52.52],
        [13.42, 52.52],
        [13.4, 52.52],
      ]) {
        await httpExpect(201, base, 'POST', `/devices/${device.id}/locations`, {
          apiKey: key,
          body: { coordinates },
        });
      }
      await writeInvoices(owner.workspaceId);
      const usage = await httpExpect<UsageOut>(200, base, 'GET', '/subscriptions/usage', {
        token: owner.token,
      });

      await openBilling(page, owner);
      const free = plans.find((p) => p.id === 'free');
      const pro = plans.find((p) => p.id === 'pro');
      assert.ok(free && pro);
      await page.locator('.plan-name').filter({ hasText: free.name }).waitFor();
      assert.deepEqual(await shownLimits(page), expectedLimits(free));

      // Usage against every limit: a bar with its numbers for each.
      const geofences = page.getByRole('progressbar', { name: 'Geofences' });
      assert.match((await geofences.getAttribute('aria-valuetext')) ?? '', /^1 of 50 \(2\.0 %\)$/);
      for (const name of ['Events', 'API requests', 'Geofences', 'Webhooks', 'Devices']) {
        await page.getByRole('progressbar', { name }).waitFor();
      }

      // The chart is drawn (a canvas), and the same days are in the table under it.
      const chart = page.getByRole('img', { name: /^Chart of daily events/ });
      await chart.locator('canvas').first().waitFor();
      const box = await chart.locator('canvas').first().boundingBox();
      assert.ok(box && box.width > 200 && box.height > 100, `a chart of ${box?.width}×${box?.height}`);
      await page.getByText("The chart's numbers as a table").click();
      const table = page.getByRole('table', { name: 'Daily usage of this period' });
      await table.waitFor();
      const rows = await table
        .locator('tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) => [
            tr.querySelector('time')?.getAttribute('datetime') ?? '',
            ...[...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''),
          ]),
        );
      assert.deepEqual(
        rows,
        usage.daily.map((d) => [
          d.date,
          d.events.toLocaleString('en-GB'),
          d.api_requests.toLocaleString('en-GB'),
        ]),
      );
      assert.equal(rows.length, new Date().getUTCDate(), 'one row per day of the period so far');
      assert.ok((usage.daily.at(-1)?.events ?? 0) >= 2, 'today has the enter and exit events');
      await axe(page);
      await screenshot(page, 'billing');

      // The owner changes the plan: the page says so and shows the new limits.
      const form = page.getByRole('form', { name: 'Change plan' });
      await form.getByRole('radio', { name: new RegExp(`^${pro.name}`) }).check();
      await form.getByRole('button', { name: 'Change plan' }).click();
      await form
        .getByRole('status')
        .filter({ hasText: `now on the ${pro.name} plan` })
        .waitFor();
      await page.locator('.plan-name').filter({ hasText: pro.name }).waitFor();
      assert.deepEqual(await shownLimits(page), expectedLimits(pro));
      await page
        .getByRole('progressbar', { name: 'Geofences' })
        .and(page.locator(`[aria-valuemax="${pro.limits.geofences}"]`))
        .waitFor();
      const current = await httpExpect<{ plan: string }>(200, base, 'GET', '/subscriptions/current', {
        token: owner.token,
      });
      assert.equal(current.plan, 'pro');

      // Invoices: twelve on the first page, the newest first; the second page (offset in the address).
      const invoices = page.getByRole('table', { name: 'Invoices, newest first' });
      const months = closedMonths(MONTHS);
      await invoices
        .getByRole('rowheader', { name: new RegExp(`^${monthName(months[0]?.start ?? new Date())}`) })
        .waitFor();
      assert.equal(await invoices.locator(':scope > tbody > tr:not([hidden])').count(), 12);
      await page
        .getByRole('navigation', { name: 'Pages of invoices' })
        .getByRole('button', { name: 'Next page' })
        .click();
      await page.waitForURL((url) => url.searchParams.get('offset') === '12');
      const oldest = months[MONTHS - 1];
      const secondLast = months[MONTHS - 2];
      assert.ok(oldest && secondLast);
      await invoices.getByRole('rowheader', { name: new RegExp(`^${monthName(oldest.start)}`) }).waitFor();
      assert.equal(await invoices.locator(':scope > tbody > tr:not([hidden])').count(), 2);

      // A row opens its line items; MONTHS - 2 is even: it has the overage line.
      const open = invoices.getByRole('button', {
        name: `Show line items of ${monthName(secondLast.start)}`,
      });
      assert.equal(await open.getAttribute('aria-expanded'), 'false');
      await open.click();
      const items = page.getByRole('table', { name: `Line items of ${monthName(secondLast.start)}` });
      await items.waitFor();
      const lines = await items
        .locator('tbody tr')
        .evaluateAll((trs) =>
          trs.map((tr) => [...tr.querySelectorAll('th, td')].map((c) => c.textContent ?? '')),
        );
      assert.deepEqual(lines, [
        [`Pro plan, ${secondLast.id}`, '1', 'US$49.00', 'US$49.00'],
        ['1500 events over the 250000 included (2 × 1,000 events)', '2', 'US$0.50', 'US$1.00'],
      ]);
      assert.equal(
        await invoices
          .getByRole('button', { name: `Hide line items of ${monthName(secondLast.start)}` })
          .getAttribute('aria-expanded'),
        'true',
      );
      await axe(page);
      await screenshot(page, 'billing-invoice-items', items);
    }));

  test('a member sees the plans and is refused the change with a clear message', () =>
    inPage(browser, base, async (page) => {
      const owner = await registerAccount(base, 'plan-team');
      const member = await registerAccount(base, 'plan-member');
      await httpExpect(201, base, 'POST', `/workspaces/${owner.workspaceId}/members`, {
        token: owner.token,
        body: { email: member.email, role: 'member' },
      });
      await openBilling(page, member);
      // Into the owner's workspace, where the member is a member.
      await page.getByLabel('Workspace').selectOption({ label: 'plan-team workspace' });
      await page.getByText('You are a member of plan-team workspace.', { exact: false }).waitFor();
      const refusal = page.getByRole('status').filter({ hasText: 'Only' });
      assert.equal(
        (await refusal.locator('strong').textContent())?.trim(),
        "Only the workspace's owners and admins can change the plan.",
      );
      assert.equal(await page.getByRole('button', { name: 'Change plan' }).count(), 0, 'no change form');
      assert.equal(await page.getByRole('radio').count(), 0);
      // The plans are still there to read.
      await page
        .getByRole('table', { name: 'Plans and their limits' })
        .getByRole('rowheader', { name: /^Pro/ })
        .waitFor();
      await axe(page);
      await screenshot(page, 'billing-member', refusal);
    }));
});
