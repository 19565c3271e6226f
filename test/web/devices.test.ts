/**
 * Devices in a real browser against the real server: the list (search, sort and page in the URL,
 * through the API's own filters), creating a device there, renaming it, editing its metadata as the
 * API validates it, and deleting it; the device page's trail over a time range and its tracking
 * session; on the live map, a device marker reached with the keyboard and selected with Enter, and
 * follow mode keeping a moving device in view.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { httpExpect, NO_PLAN_LIMITS } from '../helpers/spawned-server.ts';
import { axe, inPage, PHONE, painted, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';

interface DeviceOut {
  id: string;
  name: string;
  external_id: string | null;
  metadata: Record<string, unknown>;
}

const pad = (n: number): string => String(n).padStart(2, '0');

describe('dashboard: devices', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;

  before(async () => {
    ({ server, browser } = await startServerAndBrowser(NO_PLAN_LIMITS));
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function open(page: Page, account: Account, path: string): Promise<void> {
    await page.goto(`/login?next=${encodeURIComponent(path)}`);
    await signIn(page, account.email, account.password);
  }

  function newDevice(account: Account, body: Record<string, unknown>): Promise<DeviceOut> {
    return httpExpect<DeviceOut>(201, base, 'POST', '/devices', { token: account.token, body });
  }

  function move(account: Account, id: string, coordinates: [number, number], timestamp?: string) {
    return httpExpect(201, base, 'POST', `/devices/${id}/locations`, {
      token: account.token,
      body: { coordinates, accuracy: 5, ...(timestamp ? { timestamp } : {}) },
    });
  }

  /** The names in the devices table, top first. */
  function listedNames(page: Page): Promise<string[]> {
    return page
      .getByRole('table')
      .locator('tbody tr td:first-child')
      .evaluateAll((cells) => cells.map((cell) => cell.textContent ?? ''));
  }

  /** Waits until the list shows `range` (the pager's "1–50 of 60") and returns its names. */
  async function listed(page: Page, range: string): Promise<string[]> {
    await page
      .getByRole('navigation', { name: 'Pages of devices' })
      .getByText(range, { exact: true })
      .waitFor();
    return listedNames(page);
  }

  test('the list: search, sort and page in the URL over 60 devices', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'devices-list');
      // Created one after another: "newest first" is the reverse of this order.
      for (let i = 1; i <= 30; i++)
        await newDevice(account, { name: `Truck ${pad(i)}`, external_id: `T-${pad(i)}` });
      for (let i = 1; i <= 30; i++)
        await newDevice(account, { name: `bike ${pad(i)}`, external_id: `B-${pad(i)}` });

      await open(page, account, '/devices/list');
      await page.getByRole('heading', { level: 1, name: 'Devices' }).waitFor();
      const first = await listed(page, '1–50 of 60');
      assert.equal(first.length, 50);
      assert.deepEqual(first.slice(0, 2), ['bike 30', 'bike 29'], 'newest first');
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.waitForURL((url) => url.searchParams.get('offset') === '50');
      const second = await listed(page, '51–60 of 60');
      assert.deepEqual(second.slice(-2), ['Truck 02', 'Truck 01']);
      await axe(page, 'device list, second page');

      // A search starts on the first page and goes through the API (q matches the external id too).
      await page.getByRole('searchbox', { name: 'Search' }).fill('t-1');
      await page.waitForURL((url) => url.searchParams.get('q') === 't-1' && !url.searchParams.has('offset'));
      assert.deepEqual(
        await listed(page, '1–10 of 10'),
        Array.from({ length: 10 }, (_, k) => `Truck ${19 - k}`),
      );

      // By name, case-insensitively: "bike" before "Truck".
      await page.getByRole('searchbox', { name: 'Search' }).fill('');
      await page.waitForURL((url) => !url.searchParams.has('q'));
      await page.getByRole('combobox', { name: 'Sort' }).selectOption({ label: 'Name, A to Z' });
      await page.waitForURL((url) => url.searchParams.get('sort') === 'name');
      const byName = await listed(page, '1–50 of 60');
      assert.deepEqual(byName.slice(0, 2), ['bike 01', 'bike 02']);
      assert.deepEqual(byName.slice(29, 31), ['bike 30', 'Truck 01']);

      // The URL alone restores search, order and page.
      await page.goto('/devices/list?q=bike&sort=-name&offset=20');
      assert.deepEqual(await listed(page, '21–30 of 30'), [
        'bike 10',
        'bike 09',
        'bike 08',
        'bike 07',
        'bike 06',
        'bike 05',
        'bike 04',
        'bike 03',
        'bike 02',
        'bike 01',
      ]);
      assert.equal(await page.getByRole('searchbox', { name: 'Search' }).inputValue(), 'bike');
      assert.equal(await page.getByRole('combobox', { name: 'Sort' }).inputValue(), '-name');
      await page.getByRole('searchbox', { name: 'Search' }).fill('nothing like it');
      await page.getByText('No device’s name or external id contains “nothing like it”.').waitFor();
      await page.goto('/devices/list?sort=name');
      await listed(page, '1–50 of 60');
      await axe(page, 'device list by name');
      await screenshot(page, 'devices-list');
    }));

  test('create from the list, rename, edit metadata as the API validates it, delete', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'devices-edit');
      await newDevice(account, { name: 'Existing', external_id: 'EX-1' });
      await open(page, account, '/devices/list');
      await page.getByText('Add a device').click();
      const create = page.getByRole('form', { name: 'Add a device' });
      await create.getByLabel('Name').fill('Courier 9');

      // An external id already taken: the API's answer is shown, nothing is created.
      watch.allowHttpError(400, /\/api\/v1\/devices$/);
      await create.getByLabel('External id (optional)').fill('EX-1');
      await create.getByRole('button', { name: 'Create device' }).click();
      await create.getByRole('alert').waitFor();
      await create.getByLabel('External id (optional)').fill('C-9');
      await create.getByRole('button', { name: 'Create device' }).click();
      await page.waitForURL((url) => /^\/devices\/[0-9a-f-]{36}$/.test(url.pathname));
      const id = new URL(page.url()).pathname.split('/').at(-1) ?? '';
      await page.getByRole('heading', { level: 1, name: 'Courier 9' }).waitFor();
      await page.getByText('No tokens yet').waitFor();

      // Rename.
      const details = page.getByRole('form', { name: 'Name and identifiers' });
      await details.getByLabel('Name', { exact: true }).fill('Courier Nine');
      await details.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('heading', { level: 1, name: 'Courier Nine' }).waitFor();
      await details.getByText('Saved.').waitFor();
      const renamed = await httpExpect<DeviceOut>(200, base, 'GET', `/devices/${id}`, {
        token: account.token,
      });
      assert.equal(renamed.name, 'Courier Nine');
      assert.equal(renamed.external_id, 'C-9');

      // Metadata: what the API would refuse is refused beside its row, before any request.
      const metadata = page.getByRole('form', { name: 'Metadata' });
      await metadata.getByText('No metadata.').waitFor();
      const addKey = metadata.getByRole('button', { name: 'Add a key' });
      await addKey.click();
      await metadata.getByLabel('Key 1', { exact: true }).fill('plate');
      await metadata.getByLabel('Value 1', { exact: true }).fill('B-123');
      await addKey.click();
      await metadata.getByLabel('Key 2', { exact: true }).fill('seats');
      await metadata.getByLabel('Kind of value 2').selectOption({ label: 'Number' });
      await metadata.getByLabel('Value 2', { exact: true }).fill('four');
      await addKey.click();
      await metadata.getByLabel('Key 3', { exact: true }).fill('tags');
      await metadata.getByLabel('Kind of value 3').selectOption({ label: 'JSON' });
      await metadata.getByLabel('Value 3', { exact: true }).fill('["north", ');
      await addKey.click();
      await metadata.getByLabel('Key 4', { exact: true }).fill('plate');
      await metadata.getByLabel('Value 4', { exact: true }).fill('again');
      await metadata.getByRole('button', { name: 'Save metadata' }).click();
      await metadata.getByText('3 rows need fixing before the metadata can be saved.').waitFor();
      await metadata.getByText('Enter a number, like 42 or -3.5.').waitFor();
      await metadata.getByText('This is not valid JSON').waitFor();
      await metadata.getByText('The key “plate” is used twice.').waitFor();
      assert.equal(
        await metadata.getByLabel('Value 2', { exact: true }).getAttribute('aria-invalid'),
        'true',
      );
      await axe(page, 'metadata with problems');
      await screenshot(page, 'device-metadata-problems', metadata);

      await metadata.getByLabel('Value 2', { exact: true }).fill('4');
      await metadata.getByLabel('Value 3', { exact: true }).fill('["north", {"depth": 2}]');
      await metadata.getByRole('button', { name: 'Remove key 4' }).click();
      await addKey.click();
      await metadata.getByLabel('Key 4', { exact: true }).fill(' has trailer ');
      await metadata.getByLabel('Kind of value 4').selectOption({ label: 'Yes/no' });
      await metadata.getByLabel('Value 4', { exact: true }).selectOption({ label: 'No (false)' });
      await metadata.getByRole('button', { name: 'Save metadata' }).click();
      await metadata.getByText('Metadata saved.').waitFor();
      const saved = await httpExpect<DeviceOut>(200, base, 'GET', `/devices/${id}`, { token: account.token });
      assert.deepEqual(saved.metadata, {
        plate: 'B-123',
        seats: 4,
        tags: ['north', { depth: 2 }],
        // Keys are kept exactly as typed, spaces included (the API keeps them so).
        ' has trailer ': false,
      });
      assert.equal(saved.name, 'Courier Nine', 'saving metadata leaves the name alone');

      // Delete, after confirming.
      await page.getByRole('button', { name: 'Delete device' }).click();
      await page.getByRole('group', { name: 'Delete “Courier Nine” for good?' }).waitFor();
      await page.getByRole('button', { name: 'Delete device' }).click();
      await page.waitForURL((url) => url.pathname === '/devices/list');
      await listed(page, '1–1 of 1');
      assert.deepEqual(await listedNames(page), ['Existing']);
      await httpExpect(404, base, 'GET', `/devices/${id}`, { token: account.token });
    }));

  test('device page: the trail over a time range, the tracking session explained and started', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'devices-trail');
      const device = await newDevice(account, { name: 'Walker' });
      // Six fixes, ten minutes apart, the newest an hour ago (whole minutes: the pickers have minutes).
      const start = Math.floor(Date.now() / 60_000) * 60_000 - 110 * 60_000;
      const at = (i: number) => new Date(start + i * 10 * 60_000).toISOString();
      for (let i = 0; i < 6; i++) await move(account, device.id, [13.4 + i * 0.001, 52.52], at(i));

      await open(page, account, `/devices/${device.id}`);
      await page.getByRole('heading', { level: 1, name: 'Walker' }).waitFor();
      const trail = page.getByTestId('device-trail');
      await trail.getByText('The latest 6 locations.').waitFor();

      // From the second fix to the fourth (the inputs are local time; the browser runs in UTC).
      const range = page.getByRole('form', { name: 'Trail time range' });
      const local = (iso: string) => iso.slice(0, 16);
      const asked = page.waitForRequest(
        (r) => r.url().includes(`/devices/${device.id}/locations?`) && r.url().includes('from='),
      );
      await range.getByLabel('From').fill(local(at(1)));
      await range.getByLabel('To').fill(local(at(3)));
      await range.getByRole('button', { name: 'Show trail' }).click();
      const query = new URL((await asked).url()).searchParams;
      assert.equal(query.get('from'), at(1));
      assert.equal(
        query.get('to'),
        new Date(Date.parse(at(3)) + 59_999).toISOString(),
        'the whole last minute',
      );
      await trail.getByText(/^3 locations between /).waitFor();
      const url = new URL(page.url());
      assert.equal(url.searchParams.get('from'), at(1));

      // The range is in the URL: a reload shows the same trail.
      await page.reload();
      await page
        .getByTestId('device-trail')
        .getByText(/^3 locations between /)
        .waitFor();
      assert.equal(
        await page.getByRole('form', { name: 'Trail time range' }).getByLabel('From').inputValue(),
        local(at(1)),
      );
      await page.getByRole('button', { name: 'Latest locations' }).click();
      await trail.getByText('The latest 6 locations.').waitFor();

      // No session yet: what that means is said, and one can be started and stopped.
      const session = page.getByRole('region', { name: 'Tracking session' });
      await session.getByText('No tracking session', { exact: true }).waitFor();
      await session.getByText('every location is still stored and checked against the geofences').waitFor();
      await axe(page, 'device page');
      await screenshot(page, 'device-page');
      await session.getByRole('button', { name: 'Start a tracking session' }).click();
      await session.getByText('In progress').waitFor();
      await move(account, device.id, [13.41, 52.52]);
      await session.getByRole('button', { name: 'Stop tracking session' }).click();
      await session.getByText('(the last one ended').waitFor();
      const sessions = await httpExpect<{
        results: Array<{ status: string; summary: { location_count: number } }>;
      }>(200, base, 'GET', `/sessions?device_id=${device.id}`, { token: account.token });
      assert.equal(sessions.results[0]?.status, 'completed');
      assert.equal(sessions.results[0]?.summary.location_count, 1);
      await page.setViewportSize(PHONE);
      await painted(page);
      await axe(page, 'device page, phone');
    }));

  /** Whether the map shows the device named `name` (its marker's middle inside the map's box). */
  function inView(page: Page, mapTestId: string, name: string): Promise<boolean> {
    return page.evaluate(`(() => {
      const map = document.querySelector('[data-testid="${mapTestId}"]').getBoundingClientRect();
      const marker = document.querySelector('[role="button"][aria-label="Device ${name}"]');
      if (!marker) return false;
      const r = marker.getBoundingClientRect();
      const x = r.left + r.width / 2;
      const y = r.top + r.height / 2;
      return x > map.left && x < map.right && y > map.top && y < map.bottom;
    })()`);
  }

  /** Waits (frame by frame, up to about ten seconds) until the map shows the device. */
  async function waitInView(page: Page, mapTestId: string, name: string): Promise<void> {
    for (let frames = 0; !(await inView(page, mapTestId, name)); frames++) {
      if (frames > 300) assert.fail(`the device ${name} never came into view`);
      await painted(page);
    }
  }

  test('live map: a marker reached with Tab and selected with Enter; follow keeps it in view', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'devices-map');
      const names = ['Alpha', 'Bravo', 'Charlie'];
      const ids: string[] = [];
      // Far apart: each is a marker of its own when the map fits them all.
      for (const [i, name] of names.entries()) {
        const device = await newDevice(account, { name });
        ids.push(device.id);
        await move(account, device.id, [2 + i * 10, 48 + i * 2]);
      }
      await open(page, account, '/devices');
      await page.locator('[data-testid="devices-map"][data-ready="true"]').waitFor();
      const map = page.getByRole('application', { name: 'Device map' });
      // The map fits them all and the clustering worker answers for that view a few frames after
      // the first draw: until then two of them may still be one group.
      for (const name of names) await waitInView(page, 'devices-map', name);

      // From the map, Tab goes from marker to marker; each says which device it is.
      await map.focus();
      const reached: string[] = [];
      for (let i = 0; i < 3; i++) {
        await page.keyboard.press('Tab');
        reached.push(await page.evaluate<string>("document.activeElement.getAttribute('aria-label') ?? ''"));
      }
      assert.deepEqual([...reached].sort(), ['Device Alpha', 'Device Bravo', 'Device Charlie']);
      while (
        (await page.evaluate<string>("document.activeElement.getAttribute('aria-label')")) !== 'Device Bravo'
      )
        await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Enter');
      await page.waitForURL((url) => url.searchParams.get('device') === ids[1]);
      const panel = page.getByRole('region', { name: 'Bravo' });
      await panel.getByRole('heading', { level: 2, name: 'Bravo' }).waitFor();
      await panel.getByText('No tracking session is running.').waitFor();
      await axe(page, 'devices map, a device selected with the keyboard');
      await screenshot(page, 'devices-map-keyboard');

      // Zoomed in on Bravo, it moves far away: without follow, it leaves the view.
      await panel.getByRole('button', { name: 'Show on map' }).click();
      await waitInView(page, 'devices-map', 'Bravo');
      await move(account, ids[1] ?? '', [13, 51]);
      await panel.getByText('51.00000, 13.00000').waitFor();
      await painted(page);
      assert.equal(await inView(page, 'devices-map', 'Bravo'), false, 'out of view without follow');

      // Follow: the map goes to it, and keeps it in view as it moves on.
      await panel.getByRole('checkbox', { name: /Follow this device/ }).check();
      await page.waitForURL((url) => url.searchParams.get('follow') === '1');
      await waitInView(page, 'devices-map', 'Bravo');
      for (const [lng, lat] of [
        [13.5, 51.2],
        [14.2, 51.6],
      ] as const) {
        await move(account, ids[1] ?? '', [lng, lat]);
        await panel.getByText(`${lat.toFixed(5)}, ${lng.toFixed(5)}`).waitFor();
        await waitInView(page, 'devices-map', 'Bravo');
      }
      await screenshot(page, 'devices-map-follow');

      // The device page follows too.
      await page.goto(`/devices/${ids[1]}?follow=1`);
      await page.locator('[data-testid="device-map"][data-ready="true"]').waitFor();
      await waitInView(page, 'device-map', 'Bravo');
      await move(account, ids[1] ?? '', [16, 50]);
      await page.getByTestId('device-position').getByText('50.00000, 16.00000').waitFor();
      await waitInView(page, 'device-map', 'Bravo');
    }));
});
