/**
 * The Events page's live feed keeps to its filters: filtered to exits, a device's new enter does not
 * appear and its new exit does, as it happens. A second tab without a filter, open at the same
 * time, shows both, so the enter did reach the browser and was left out by the filter.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';

const SQUARE = [
  [
    [13.4, 52.518],
    [13.404, 52.518],
    [13.404, 52.521],
    [13.4, 52.521],
    [13.4, 52.518],
  ],
];

/** The events table's rows as [type, geofence], top (newest) first. */
function tableRows(page: Page): Promise<string[][]> {
  return page
    .getByRole('table', { name: 'Geofence events, newest first' })
    .locator('tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => {
        const cells = [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '');
        return [cells[1] ?? '', cells[3] ?? ''];
      }),
    );
}

async function openEvents(page: Page, account: Account): Promise<void> {
  await page.goto('/login?next=%2Fevents');
  await signIn(page, account.email, account.password);
  await page.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
  await page.locator('.live-status[data-state="live"]').waitFor();
}

describe('dashboard: the live events feed', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;

  before(async () => {
    ({ server, browser } = await startServerAndBrowser());
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('filtered to exits: a new enter stays out, a new exit appears live', () =>
    inPage(browser, base, async (page, _watch, context) => {
      const account = await registerAccount(base, 'feed');
      const auth = { token: account.token };
      await httpExpect(201, base, 'POST', '/geofences', {
        ...auth,
        body: { name: 'Depot', geometry: { type: 'Polygon', coordinates: SQUARE } },
      });
      const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
        ...auth,
        body: { name: 'Van 7' },
      });
      const now = Date.now();
      const move = (coordinates: [number, number], secondsAgo: number) =>
        httpExpect(201, base, 'POST', `/devices/${device.id}/locations`, {
          ...auth,
          body: { coordinates, accuracy: 5, timestamp: new Date(now - secondsAgo * 1000).toISOString() },
        });

      // The whole feed, in a tab of its own.
      const everything = await context.newPage();
      await openEvents(everything, account);
      await everything.getByText('No events match these filters.').waitFor();
      await everything.evaluate('window.openBeforeTheEvents = true');

      // The filtered feed: type "exit" chosen on the page, kept in the address.
      await page.bringToFront();
      await openEvents(page, account);
      await page.getByLabel('Type').selectOption('exit');
      await page.waitForURL((url) => url.searchParams.get('type') === 'exit');
      await page.locator('summary', { hasText: 'Filters (1 active)' }).waitFor();
      await page.getByText('No events match these filters.').waitFor();

      await move([13.41, 52.5195], 3);
      await move([13.402, 52.5195], 2); // enter
      await move([13.41, 52.5195], 1); // exit

      const exitRow = page.locator('tbody tr.row-new').filter({ has: page.locator('.event-exit') });
      await exitRow.filter({ hasText: 'Depot' }).waitFor();
      assert.deepEqual(await tableRows(page), [['exit', 'Depot']], 'the enter is not in the exits feed');
      await page.getByText('1–1 of 1').waitFor();
      await axe(page);
      await screenshot(page, 'events-filtered-live');

      // The enter did arrive: the unfiltered tab shows it, before the exit.
      await everything.bringToFront();
      await everything.getByText('1–2 of 2').waitFor();
      assert.deepEqual(await tableRows(everything), [
        ['exit', 'Depot'],
        ['enter', 'Depot'],
      ]);
      assert.equal(await everything.evaluate('window.openBeforeTheEvents'), true, 'they arrived live');

      // The filtered feed still holds only the exit after the enter had all the time to arrive.
      assert.deepEqual(await tableRows(page), [['exit', 'Depot']]);
    }));
});
