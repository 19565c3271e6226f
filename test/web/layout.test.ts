/**
 * The dashboard's frame holds every page: nothing sticks out of it. At laptop and phone sizes, on
 * every page (the navigation of web/src/app/Shell.tsx plus the pages reached from elsewhere), the
 * document is no wider than the window, and no taller than the app itself: text hidden for screen
 * readers (absolutely positioned) must not escape a scrolling panel and stretch the page below the
 * app into blank space. The map pages are exactly the window on a laptop (the panel scrolls, never
 * the page), also after a geofence is selected and after a file is imported into the panel.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { inPage, LAPTOP, PHONE, painted, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';

/** The pages of the main navigation, as Shell.tsx lists them. */
function navPages(): string[] {
  const source = fs.readFileSync(path.resolve(import.meta.dirname, '../../web/src/app/Shell.tsx'), 'utf8');
  const block = /export const NAV = \[([\s\S]*?)\] as const/.exec(source)?.[1];
  assert.ok(block, 'NAV in Shell.tsx');
  return [...block.matchAll(/href: '([^']+)'/g)].map((m) => m[1] ?? '');
}

const PAGES = [
  ...navPages(),
  '/account',
  '/notifications',
  '/webhooks/deliveries',
  '/webhooks/dead-letters',
  '/workflows/new',
  '/webhooks/new',
];

/** Pages that are the window on a laptop: a side panel that scrolls on its own beside a map. */
const MAP_PAGES = ['/geofences', '/devices'];

interface Extent {
  scrollWidth: number;
  scrollHeight: number;
  width: number;
  height: number;
  appBottom: number;
  /** Elements reaching past the app's bottom or the window's right edge, to name the cause. */
  outside: string[];
}

/** The document's size against the window's and the app's, measured in the page. */
const MEASURE = `(() => {
  const doc = document.documentElement;
  const app = document.querySelector('.shell');
  const appBottom = app ? app.getBoundingClientRect().bottom + window.scrollY : 0;
  const limitY = Math.max(doc.clientHeight, appBottom) + 1;
  const limitX = doc.clientWidth + 1;
  const outside = [];
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.bottom + window.scrollY > limitY || r.right + window.scrollX > limitX) {
      const name = el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
      outside.push(name + ' at ' + Math.round(r.right + window.scrollX) + '×' + Math.round(r.bottom + window.scrollY));
    }
  }
  return {
    scrollWidth: doc.scrollWidth, scrollHeight: doc.scrollHeight,
    width: doc.clientWidth, height: doc.clientHeight,
    appBottom: Math.ceil(appBottom), outside: outside.slice(0, 8),
  };
})()`;

/** Fails if the page scrolls sideways, or further down than the app reaches (or, `fits`, at all). */
async function assertContained(page: Page, what: string, fits: boolean): Promise<void> {
  await painted(page);
  const e = await page.evaluate<Extent>(MEASURE);
  const where = `${what}: document ${e.scrollWidth}×${e.scrollHeight}, window ${e.width}×${e.height}, app to ${e.appBottom}; outside: ${e.outside.join(', ') || 'none'}`;
  assert.ok(e.scrollWidth <= e.width, `no horizontal overflow on ${where}`);
  const bottom = fits ? e.height : Math.max(e.height, e.appBottom);
  assert.ok(e.scrollHeight <= bottom, `${fits ? 'no page scroll' : 'nothing below the app'} on ${where}`);
}

const LOADING = /^\s*Loading\b/;

async function settled(page: Page): Promise<void> {
  const loading = page.getByText(LOADING);
  const deadline = Date.now() + 15_000;
  while ((await loading.count()) > 0) {
    if (Date.now() > deadline) assert.fail(`${page.url()} is still loading`);
    await painted(page);
  }
}

async function atBothSizes(page: Page, what: string, fitsOnLaptop: boolean): Promise<void> {
  await page.setViewportSize(LAPTOP);
  await assertContained(page, `${what} at laptop size`, fitsOnLaptop);
  await page.setViewportSize(PHONE);
  await assertContained(page, `${what} at phone size`, false);
  await page.setViewportSize(LAPTOP);
}

describe('dashboard layout: nothing sticks out of the app', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let account: Account;
  let receiver: http.Server;

  before(async () => {
    // A receiver that is always down: the device's events end in the dead-letter queue, whose
    // table is the widest of the dashboard.
    receiver = http.createServer((_req, res) => res.writeHead(500).end('down'));
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    ({ server, browser } = await startServerAndBrowser({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '50ms',
      WEBHOOK_POLL_INTERVAL: '100ms',
    }));
    base = server.base;
    account = await registerAccount(base, 'layout');
    const token = account.token;
    await httpExpect(201, base, 'POST', '/webhooks', {
      token,
      body: {
        name: 'Dispatch',
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/geofence`,
      },
    });
    // Enough geofences that the panel's list is longer than the window and scrolls.
    for (let i = 1; i <= 12; i += 1) {
      await httpExpect(201, base, 'POST', '/geofences', {
        token,
        body: {
          name: `Depot ${i}`,
          geometry: { type: 'Circle', coordinates: [13.4 + i / 1000, 52.52], radius: 150 },
        },
      });
    }
    const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
      token,
      body: { name: 'Van 1' },
    });
    for (const coordinates of [
      [13.412, 52.52],
      [13.45, 52.52],
    ]) {
      await httpExpect(201, base, 'POST', `/devices/${device.id}/locations`, {
        token,
        body: { coordinates },
      });
    }
    await httpExpect(201, base, 'POST', '/account/api-keys', {
      token,
      body: { name: 'Tracker', scopes: ['locations:write'] },
    });
    const deadline = Date.now() + 30_000;
    while (
      (await httpExpect<{ results: unknown[] }>(200, base, 'GET', '/webhooks/dlq', { token })).results
        .length < 2
    ) {
      assert.ok(
        Date.now() < deadline,
        `the failed deliveries never reached the dead-letter queue; the server said:\n${server.output()}`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    receiver?.closeAllConnections();
    receiver?.close();
  });

  for (const target of PAGES) {
    test(`${target}: no sideways scroll, nothing below the app`, () =>
      inPage(browser, base, async (page) => {
        await page.goto(`/login?next=${encodeURIComponent(target)}`);
        await signIn(page, account.email, account.password);
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        await settled(page);
        await atBothSizes(page, target, MAP_PAGES.includes(target));
      }));
  }

  test('geofences: the page stays the window after a geofence is selected and after an import', () =>
    inPage(browser, base, async (page) => {
      await page.goto(`/login?next=${encodeURIComponent('/geofences')}`);
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'Geofences' }).waitFor();
      const listed = page.getByRole('region', { name: 'All geofences' }).getByRole('button');
      await listed.filter({ hasText: 'Depot 3' }).click();
      await page.getByRole('region', { name: 'Edit “Depot 3”' }).waitFor();
      assert.match(page.url(), /selected=/);
      await atBothSizes(page, 'a geofence selected', true);

      await page.getByLabel('Import a GeoJSON file').setInputFiles({
        name: 'sites.geojson',
        mimeType: 'application/geo+json',
        buffer: Buffer.from(
          JSON.stringify({
            type: 'FeatureCollection',
            features: Array.from({ length: 8 }, (_, i) => ({
              type: 'Feature',
              geometry: { type: 'Point', coordinates: [13.39 - i / 1000, 52.51] },
              properties: { name: `Imported site with a rather long name ${i}`, radius: 80 },
            })),
          }),
        ),
      });
      await page.locator('.import-report').getByRole('status').filter({ hasText: '8 created' }).waitFor();
      await atBothSizes(page, 'an import report', true);
    }));
});
