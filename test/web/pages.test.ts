/**
 * Every page of the signed-in dashboard, in a real browser against the real server, with a little
 * data in the workspace (a geofence, a device that entered and left it, an API key, a webhook, a
 * workflow): each page has its h1, no serious or critical accessibility violation at laptop and
 * phone sizes, nothing broken reported by the page (console errors, failed requests, CSP), and
 * is photographed at both sizes. The list is the navigation of web/src/app/Shell.tsx (read from its
 * source, so a new entry there is visited too) plus the pages reached from the top bar and others.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, LAPTOP, PHONE, painted, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';

/** The pages of the main navigation, as Shell.tsx lists them. */
function navPages(): string[] {
  const source = fs.readFileSync(path.resolve(import.meta.dirname, '../../web/src/app/Shell.tsx'), 'utf8');
  const block = /export const NAV = \[([\s\S]*?)\] as const/.exec(source)?.[1];
  assert.ok(block, 'NAV in Shell.tsx');
  return [...block.matchAll(/href: '([^']+)'/g)].map((m) => m[1] ?? '');
}

/** Pages reached from the top bar or from other pages rather than from the navigation. */
const OTHER_PAGES = [
  '/account',
  '/notifications',
  '/webhooks/deliveries',
  '/webhooks/dead-letters',
  '/workflows/new',
  '/webhooks/new',
];

const NAV_PAGES = navPages();

/** Text a page shows while its data is on the way. */
const LOADING = /^\s*Loading\b/;

/** Waits until nothing on the page says it is loading (a page's data arrived). */
async function settled(page: Page): Promise<void> {
  const loading = page.getByText(LOADING);
  const deadline = Date.now() + 15_000;
  while ((await loading.count()) > 0) {
    if (Date.now() > deadline) assert.fail(`${page.url()} is still loading`);
    await painted(page);
  }
}

describe('dashboard: every page', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let account: Account;

  before(async () => {
    ({ server, browser } = await startServerAndBrowser());
    base = server.base;
    account = await registerAccount(base, 'pages');
    const token = account.token;
    const fence = await httpExpect<{ id: string }>(201, base, 'POST', '/geofences', {
      token,
      body: { name: 'Depot', geometry: { type: 'Circle', coordinates: [13.405, 52.52], radius: 150 } },
    });
    const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
      token,
      body: { name: 'Van 1' },
    });
    for (const coordinates of [
      [13.405, 52.52],
      [13.42, 52.52],
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
    // After the events above: no delivery is attempted to this address.
    const webhook = await httpExpect<{ id: string }>(201, base, 'POST', '/webhooks', {
      token,
      body: { name: 'Dispatch', url: 'https://example.com/hooks/geofence' },
    });
    await httpExpect(201, base, 'POST', '/workflows', {
      token,
      body: {
        name: 'Tell dispatch',
        trigger: { geofence_id: fence.id, event_types: ['enter'] },
        actions: [{ type: 'webhook', config: { webhook_id: webhook.id } }],
      },
    });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('the navigation lists the dashboard’s areas', () => {
    assert.ok(NAV_PAGES.length >= 9 && NAV_PAGES.every((p) => p.startsWith('/')), NAV_PAGES.join(', '));
  });

  for (const target of [...NAV_PAGES, ...OTHER_PAGES]) {
    test(`${target}: an h1, accessible at laptop and phone sizes, nothing broken`, () =>
      inPage(browser, base, async (page) => {
        await page.goto(`/login?next=${encodeURIComponent(target)}`);
        await signIn(page, account.email, account.password);
        assert.equal(new URL(page.url()).pathname, target, 'signed in onto the page asked for');
        const h1 = page.getByRole('heading', { level: 1 });
        await h1.first().waitFor();
        assert.equal(await h1.count(), 1, 'one h1');
        assert.notEqual(((await h1.textContent()) ?? '').trim(), '', 'the h1 says something');
        assert.notEqual((await h1.textContent())?.trim(), 'Page not found');
        await settled(page);
        await axe(page, `${target} at ${LAPTOP.width}×${LAPTOP.height}`);
        await page.setViewportSize(PHONE);
        await painted(page);
        await axe(page, `${target} at ${PHONE.width}×${PHONE.height}`);
        await page.setViewportSize(LAPTOP);
        await screenshot(page, `page${target.replaceAll('/', '-')}`);
      }));
  }
});
