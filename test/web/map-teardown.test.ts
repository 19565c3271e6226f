/**
 * Leaving a map page while the map still zooms: Leaflet finishes a zoom animation on a 250 ms
 * timer, and a map removed before it fires must not throw (it did: "Cannot read properties of
 * undefined (reading '_leaflet_pos')" in most tries). The zoom-in button is clicked and another
 * page chosen at once, six times over, on each page with a map; the harness fails the test on any
 * uncaught error in the page.
 */
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { inPage, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';

const TRIES = 6;
/** Past Leaflet's zoom-end timer (250 ms): a throw from the removed map would have happened. */
const AFTER_ZOOM_MS = 300;

async function zoomAndLeave(page: Page, mapPage: string, mapHeading: string): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Main' });
  for (let i = 0; i < TRIES; i += 1) {
    await page.getByRole('heading', { level: 1, name: mapHeading }).waitFor();
    const zoomIn = page.getByRole('button', { name: 'Zoom in' });
    await zoomIn.waitFor();
    // The map's tiles or shapes need not have arrived: the animation starts on any click.
    await zoomIn.click();
    await nav.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    // The page's clock, not a sleep: its pending timers (Leaflet's among them) fire now.
    await page.clock.runFor(AFTER_ZOOM_MS);
    await nav.getByRole('link', { name: mapPage }).click();
  }
}

describe('dashboard: a map removed while it zooms', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let account: Account;

  before(async () => {
    ({ server, browser } = await startServerAndBrowser());
    base = server.base;
    account = await registerAccount(base, 'teardown');
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  for (const [target, label, heading] of [
    ['/geofences', 'Geofences', 'Geofences'],
    ['/devices', 'Devices', 'Devices'],
  ] as const) {
    test(`${target}: zoom in, leave at once, ${TRIES} times: nothing thrown`, () =>
      inPage(browser, base, async (page) => {
        await page.clock.install();
        await page.goto(`/login?next=${encodeURIComponent(target)}`);
        await signIn(page, account.email, account.password);
        await zoomAndLeave(page, label, heading);
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      }));
  }
});
