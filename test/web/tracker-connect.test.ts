/**
 * "Connect a tracker" on the device page, in a real browser against the real server: a device
 * token made there is shown once beside the settings for the chosen app, and what the page shows
 * works as the app would use it. For Traccar Client, the Server URL shown, with the position added
 * as the OsmAnd protocol's query parameters, stores a location of that device; for OwnTracks, the
 * URL with the Username and Password shown as HTTP Basic credentials does too. A token revoked in
 * the list stops working at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, PHONE, painted, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';

interface StoredLocation {
  point: { coordinates: number[] };
  timestamp: string;
  speed: number | null;
  accuracy: number | null;
}

/** One knot in metres per second. */
const KNOT = 1852 / 3600;

describe('dashboard: connect a tracker', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let account: Account;

  before(async () => {
    ({ server, browser } = await startServerAndBrowser());
    base = server.base;
    account = await registerAccount(base, 'trackers');
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function newDevice(name: string): Promise<string> {
    const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
      token: account.token,
      body: { name },
    });
    return device.id;
  }

  /** Signs in onto the device's page and waits for its "Connect a tracker" section. */
  async function openDevice(page: Page, deviceId: string): Promise<void> {
    await page.goto(`/login?next=${encodeURIComponent(`/devices/${deviceId}`)}`);
    await signIn(page, account.email, account.password);
    await section(page).waitFor();
    await section(page).getByText('No tokens yet').waitFor();
  }

  function section(page: Page) {
    return page.getByRole('region', { name: 'Connect a tracker' });
  }

  /** Picks the app, creates the token and returns the token as the page shows it. */
  async function createToken(page: Page, app: string): Promise<string> {
    const connect = section(page);
    await connect.getByRole('group', { name: 'Tracker app' }).getByRole('radio', { name: app }).check();
    await connect.getByRole('button', { name: 'Create device token' }).click();
    const shown = connect.getByTestId('device-token');
    await shown.waitFor();
    await connect.getByText('the token is shown once').waitFor();
    const token = (await shown.textContent()) ?? '';
    assert.match(token, /^gf_dev_\S{20,}$/);
    return token;
  }

  async function shownSetting(page: Page, key: string): Promise<string> {
    return ((await section(page).getByTestId(`tracker-${key}`).textContent()) ?? '').trim();
  }

  async function locationsOf(deviceId: string): Promise<StoredLocation[]> {
    const list = await httpExpect<{ results: StoredLocation[] }>(
      200,
      base,
      'GET',
      `/devices/${deviceId}/locations`,
      { token: account.token },
    );
    return list.results;
  }

  test('Traccar Client: the Server URL shown stores a location when the app’s parameters are added', () =>
    inPage(browser, base, async (page) => {
      const deviceId = await newDevice('Van 7');
      await openDevice(page, deviceId);
      const token = await createToken(page, 'Traccar Client');
      const connect = section(page);
      await connect.getByRole('heading', { name: 'Settings for Traccar Client' }).waitFor();
      const url = await shownSetting(page, 'url');
      assert.equal(url, `${base}/api/v1/ingest/osmand?token=${token}`);
      await connect.getByRole('img', { name: 'QR code of the Server URL for Traccar Client' }).waitFor();

      // The copy button puts exactly the shown URL on the clipboard.
      await connect.getByRole('button', { name: 'Copy Server URL' }).click();
      await connect.getByRole('status').filter({ hasText: 'The Server URL is on your clipboard.' }).waitFor();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), url);

      // The token is listed by name and prefix only.
      const row = connect
        .getByRole('table', { name: 'Device tokens' })
        .getByRole('row', { name: /Traccar Client on Van 7/ });
      await row.waitFor();
      assert.match((await row.textContent()) ?? '', new RegExp(`${token.slice(0, 12)}…`));
      assert.doesNotMatch((await row.textContent()) ?? '', new RegExp(token));

      await axe(page, 'Connect a tracker, Traccar Client token shown');
      await page.setViewportSize(PHONE);
      await painted(page);
      await axe(page, 'Connect a tracker, Traccar Client token shown, phone');
      await screenshot(page, 'tracker-connect-traccar', connect);

      // What Traccar Client sends: the configured URL with the position as query parameters, POST.
      const at = new Date('2026-03-01T10:00:00Z');
      const sent = new URL(url);
      sent.searchParams.set('id', 'van-7-phone');
      sent.searchParams.set('lat', '52.520008');
      sent.searchParams.set('lon', '13.404954');
      sent.searchParams.set('timestamp', String(at.getTime() / 1000));
      sent.searchParams.set('speed', '10');
      sent.searchParams.set('accuracy', '8.0');
      const answer = await fetch(sent, { method: 'POST' });
      assert.equal(answer.status, 200, await answer.text());

      const [stored] = await locationsOf(deviceId);
      assert.ok(stored, 'a location is stored for the device');
      assert.deepEqual(stored.point.coordinates, [13.404954, 52.520008]);
      assert.equal(stored.timestamp, at.toISOString());
      assert.equal(stored.accuracy, 8);
      assert.ok(Math.abs((stored.speed ?? 0) - 10 * KNOT) < 1e-6, `speed ${stored.speed} m/s`);
    }));

  test('OwnTracks: the URL with the Username and Password shown stores a location; revoked, it stops', () =>
    inPage(browser, base, async (page) => {
      const deviceId = await newDevice('Bike courier');
      await openDevice(page, deviceId);
      const token = await createToken(page, 'OwnTracks');
      const connect = section(page);
      await connect.getByRole('heading', { name: 'Settings for OwnTracks' }).waitFor();
      assert.equal(await shownSetting(page, 'mode'), 'HTTP');
      const url = await shownSetting(page, 'url');
      const user = await shownSetting(page, 'username');
      const password = await shownSetting(page, 'password');
      assert.equal(url, `${base}/api/v1/ingest/owntracks`);
      assert.equal(password, token);
      assert.notEqual(user, '');
      await connect.getByRole('img', { name: 'QR code of the URL for OwnTracks' }).waitFor();
      await axe(page, 'Connect a tracker, OwnTracks token shown');

      // What OwnTracks sends in HTTP mode: one JSON message, HTTP Basic credentials.
      const tst = Math.floor(Date.parse('2026-03-02T08:30:00Z') / 1000);
      const send = () =>
        fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json; charset=utf-8',
            authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
            'x-limit-u': user,
            'x-limit-d': 'phone',
          },
          body: JSON.stringify({
            _type: 'location',
            lat: 48.8566,
            lon: 2.3522,
            tst,
            acc: 12,
            vel: 18,
            tid: 'bc',
          }),
        });
      const answer = await send();
      assert.equal(answer.status, 200);
      assert.deepEqual(await answer.json(), []);
      const [stored] = await locationsOf(deviceId);
      assert.ok(stored, 'a location is stored for the device');
      assert.deepEqual(stored.point.coordinates, [2.3522, 48.8566]);
      assert.equal(stored.timestamp, new Date(tst * 1000).toISOString());
      assert.equal(stored.accuracy, 12);
      assert.ok(Math.abs((stored.speed ?? 0) - 5) < 1e-6, `speed ${stored.speed} m/s (18 km/h)`);

      // "Done" hides the token for good; revoking it in the list stops the app at once.
      await connect.getByRole('button', { name: /^Done/ }).click();
      assert.equal(await connect.getByTestId('device-token').count(), 0);
      await connect.getByRole('button', { name: 'Revoke OwnTracks on Bike courier' }).click();
      await connect
        .getByRole('group', { name: /^Revoke “OwnTracks on Bike courier”\?/ })
        .getByRole('button', { name: 'Revoke' })
        .click();
      await connect.getByText('No tokens yet').waitFor();
      assert.equal((await send()).status, 401);
    }));
});
