/**
 * The main path through the dashboard, as a new user walks it, in a real browser against the real
 * server: register on the page; create an API key (shown once, copied to the clipboard); draw a
 * polygon and a circle on the Geofences map with the mouse and save them; create the Simulator
 * device on the Devices page and click its map where the device should go, out of and into each
 * shape. An Events page opened in a second tab before the clicks shows every enter and exit as it
 * happens, without a reload; the API, asked with the key made on the way, lists the same events.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type DashboardServer, PASSWORD, uniqueEmail } from './dashboard-server.ts';
import { clickMap, drawCircle, drawPolygon, type LngLat, showView } from './geofence-drawing.ts';

/** Berlin at zoom 15: a pixel is about 3 m, the shapes below a few hundred pixels across. */
const VIEW = { lat: 52.5195, lng: 13.405, zoom: 15 };
const WAREHOUSE: LngLat[] = [
  [13.399, 52.518],
  [13.403, 52.518],
  [13.403, 52.521],
  [13.399, 52.521],
];
const YARD = { centre: [13.41, 52.5195] as LngLat, radiusM: 150 };

/**
 * Where the device is clicked to, in order, and the events each move makes. The places outside are
 * well over a hundred metres from both shapes, far beyond the 10 m accuracy the simulator sends.
 */
const MOVES: Array<{ to: LngLat; events: Array<[type: string, geofence: string]> }> = [
  { to: [13.405, 52.5165], events: [] },
  { to: [13.401, 52.5195], events: [['enter', 'Warehouse']] },
  { to: [13.4055, 52.5195], events: [['exit', 'Warehouse']] },
  { to: YARD.centre, events: [['enter', 'Yard']] },
  { to: [13.4145, 52.5195], events: [['exit', 'Yard']] },
];

interface ApiEvent {
  id: string;
  event_type: string;
  geofence_name: string;
  device_id: string;
}

/** Follows a link inside the app as its own links do, without reloading the page. */
async function followLink(page: Page, target: string): Promise<void> {
  await page.evaluate(
    `history.pushState(null, '', ${JSON.stringify(target)}); dispatchEvent(new PopStateEvent('popstate'))`,
  );
}

async function nav(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

/** The events table's rows as [type, device, geofence], top (newest) first. */
function tableRows(page: Page): Promise<string[][]> {
  return page
    .getByRole('table', { name: 'Geofence events, newest first' })
    .locator('tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => {
        const cells = [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '');
        return [cells[1] ?? '', cells[2] ?? '', cells[3] ?? ''];
      }),
    );
}

describe('dashboard: the main path', () => {
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

  test('register → API key → draw two geofences → simulate a device across them → events arrive live', () =>
    inPage(browser, base, async (page, _watch, context) => {
      // Register through the page.
      const email = uniqueEmail('main');
      await page.goto('/register');
      await page.getByLabel('Your name').fill('Grace Hopper');
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByLabel('Workspace name').fill('Main Path Logistics');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.waitForURL('/geofences');
      await page.getByRole('heading', { level: 1, name: 'Geofences' }).waitFor();

      // An API key: shown once, copied to the clipboard.
      await nav(page, 'API keys');
      await page.getByLabel('Name').fill('Main path');
      await page
        .getByRole('group', { name: 'Scopes' })
        .getByRole('group', { name: 'Events' })
        .getByRole('checkbox', { name: 'read' })
        .check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const shown = page.getByTestId('new-api-key');
      await shown.waitFor();
      const key = (await shown.textContent()) ?? '';
      assert.match(key, /^gf_live_\S{32,}$/);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByRole('status').filter({ hasText: 'The key is on your clipboard.' }).waitFor();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), key);
      await axe(page);
      await screenshot(page, 'main-api-key-created');

      // Two geofences drawn with the mouse: a polygon and a circle, each named and saved.
      await nav(page, 'Geofences');
      await page.getByRole('button', { name: 'Draw polygon', exact: true }).waitFor();
      await showView(page, VIEW);
      await drawPolygon(page, WAREHOUSE);
      const form = page.getByRole('region', { name: 'New geofence' });
      await form.getByLabel('Name', { exact: true }).fill('Warehouse');
      await form.getByRole('button', { name: 'Create geofence' }).click();
      await page.getByRole('status').filter({ hasText: 'Created “Warehouse”.' }).waitFor();
      await drawCircle(page, YARD.centre, YARD.radiusM);
      await form.getByLabel('Name', { exact: true }).fill('Yard');
      await form.getByRole('button', { name: 'Create geofence' }).click();
      await page.getByRole('status').filter({ hasText: 'Created “Yard”.' }).waitFor();
      const list = page.getByRole('region', { name: 'All geofences' });
      await list.getByRole('status').filter({ hasText: '2 geofences' }).waitFor();
      await list
        .getByRole('button')
        .filter({ hasText: 'Warehouse' })
        .filter({ hasText: 'Polygon' })
        .waitFor();
      await list
        .getByRole('button')
        .filter({ hasText: 'Yard' })
        .filter({ hasText: /Circle, (14[7-9]|15[0-3]) m/ })
        .waitFor();

      // The Events page in a second tab (its own sign-in), open before anything happens.
      const feed = await context.newPage();
      await feed.goto('/login?next=%2Fevents');
      await signIn(feed, email, PASSWORD);
      await feed.getByRole('heading', { level: 1, name: 'Events' }).waitFor();
      await feed.getByText('No events match these filters.').waitFor();
      await feed.locator('.live-status[data-state="live"]').waitFor();
      await feed.evaluate('window.openedBeforeTheClicks = true');
      let loads = 0;
      feed.on('load', () => {
        loads += 1;
      });

      // The Simulator device, moved by clicks on the devices map. The first tab is in front again:
      // the browser throttles the timers of a tab behind (as it does for the user's other tab).
      await page.bringToFront();
      await followLink(page, `/devices?view=${VIEW.lat},${VIEW.lng},${VIEW.zoom}`);
      await page.getByRole('heading', { level: 1, name: 'Devices' }).waitFor();
      const map = page.getByRole('application', { name: 'Device map' });
      await page.locator('[data-testid="devices-map"][data-ready="true"]').waitFor();
      await page.getByRole('button', { name: 'Create a “Simulator” device' }).click();
      await page.waitForURL((url) => url.searchParams.has('device'));
      const deviceId = new URL(page.url()).searchParams.get('device') ?? '';
      await page.getByRole('heading', { level: 2, name: 'Simulator', exact: true }).waitFor();
      const toggle = page.getByRole('button', { name: 'Send a location where I click on the map' });
      await toggle.click();
      assert.equal(await toggle.getAttribute('aria-pressed'), 'true');

      const expected: Array<[string, string, string]> = [];
      for (const [step, move] of MOVES.entries()) {
        const sent = page.waitForResponse(
          (r) => r.request().method() === 'POST' && r.url().endsWith(`/api/v1/devices/${deviceId}/locations`),
        );
        await clickMap(page, map, move.to);
        assert.equal((await sent).status(), 201, `move ${step} was recorded`);
        const result = page.getByTestId('simulate-result');
        const words =
          move.events.length === 0
            ? 'no geofence events.'
            : move.events.map(([type, name]) => `${type} “${name}”`).join(', ');
        await result.filter({ hasText: words }).waitFor();
        // The other tab shows each event as it happens, marked as new.
        for (const [type, name] of move.events) {
          expected.unshift([type, 'Simulator', name]);
          await feed
            .locator('tbody tr.row-new')
            .filter({ has: feed.locator(`.event-${type}`) })
            .filter({ hasText: name })
            .waitFor();
        }
        if (step === 3) {
          // Inside the Yard: the panel says so.
          await page
            .getByRole('region', { name: 'Simulator' })
            .locator('.inside-list li', { hasText: 'Yard' })
            .waitFor();
          await axe(page);
          await screenshot(page, 'devices-selected');
        }
      }

      await feed.bringToFront();
      assert.deepEqual(await tableRows(feed), expected);
      assert.equal(await feed.evaluate('window.openedBeforeTheClicks'), true, 'the feed was never reloaded');
      assert.equal(loads, 0, 'the feed was never reloaded');
      await feed.getByText(`1–${expected.length} of ${expected.length}`).waitFor();
      await axe(feed);
      await screenshot(feed, 'events-live');

      // The API, asked with the key made above, lists the same events, newest first.
      const events = await httpExpect<{ results: ApiEvent[] }>(200, base, 'GET', '/events', { apiKey: key });
      assert.deepEqual(
        events.results.map((e) => [e.event_type, e.geofence_name]),
        expected.map(([type, , name]) => [type, name]),
      );
      assert.ok(events.results.every((e) => e.device_id === deviceId));

      // In the first tab too, the Events page lists them.
      await page.bringToFront();
      await nav(page, 'Events');
      await page.getByText(`1–${expected.length} of ${expected.length}`).waitFor();
      assert.deepEqual(await tableRows(page), expected);
      await axe(page);
      await screenshot(page, 'events-rows');
    }));
});
