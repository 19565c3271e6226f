/**
 * The map's own tools, in a real browser against the real server: the scale bar; the "Go to" box
 * taking typed coordinates, a geofence's name (fitted into view), a device's name (centred) and,
 * with GEOCODER_URL pointing at a fake Nominatim on loopback that the browser asks directly (the
 * CSP lets it), a place; graticule labels that are always whole, inside the map and clear of its
 * controls; and the radius shown while a circle is drawn. Photographed at laptop and phone size.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { parseCoordinates } from '../../web/src/map/coordinates.ts';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, LAPTOP, PHONE, painted, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';
import { currentView, geofenceMap, northOf, pixelOf, showView, TOOLS, tool } from './geofence-drawing.ts';

/** A depot in Hamburg's harbour, far from the Berlin view the page opens at. */
const DEPOT = [
  [9.98, 53.54],
  [9.99, 53.54],
  [9.99, 53.545],
  [9.98, 53.545],
  [9.98, 53.54],
] as const;

/** What the fake geocoder answers for "Brandenburger Tor", as Nominatim's jsonv2 does (strings). */
const GATE = {
  place_id: 1,
  lat: '52.5162746',
  lon: '13.3777041',
  display_name: 'Brandenburger Tor, Pariser Platz, Mitte, Berlin, Deutschland',
  boundingbox: ['52.5161', '52.5164', '13.3775', '13.3779'],
};

interface FakeGeocoder {
  url: string;
  /** The query of every request, in order. */
  asked: URLSearchParams[];
  close(): Promise<void>;
}

/** A Nominatim stand-in on loopback, answering any origin (as nominatim.openstreetmap.org does). */
async function startFakeGeocoder(): Promise<FakeGeocoder> {
  const asked: URLSearchParams[] = [];
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    asked.push(url.searchParams);
    const found = /brandenburger/i.test(url.searchParams.get('q') ?? '') ? [GATE] : [];
    response.writeHead(url.pathname === '/search' ? 200 : 404, {
      'content-type': 'application/json',
      'access-control-allow-origin': '*',
    });
    response.end(JSON.stringify(found));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/search`,
    asked,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function goToBox(page: Page): Locator {
  return page.getByRole('combobox', { name: 'Go to' });
}

/** Waits until the map's view in the address is centred at `lat`, `lng` (within `within` degrees). */
async function waitForCentre(page: Page, lat: number, lng: number, within = 1e-4): Promise<void> {
  await page.waitForURL((url) => {
    const [vLat = Number.NaN, vLng = Number.NaN] = (url.searchParams.get('view') ?? '')
      .split(',')
      .map(Number);
    return Math.abs(vLat - lat) <= within && Math.abs(vLng - lng) <= within;
  });
}

interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
  text: string;
  /** The text is wider than its box (cut off inside it). */
  overflows: boolean;
}

/** The map's box, its controls' and its shown graticule labels', measured in the page. */
function measureLabels(
  page: Page,
  mapName: string,
): Promise<{ frame: Rect; controls: Rect[]; labels: Rect[] }> {
  return page.evaluate(`(() => {
    const map = document.querySelector('[role="application"][aria-label=${JSON.stringify(mapName)}]');
    const rect = (e) => {
      const b = e.getBoundingClientRect();
      return { left: b.left, top: b.top, right: b.right, bottom: b.bottom, text: e.textContent,
        overflows: e.scrollWidth > e.clientWidth };
    };
    return {
      frame: rect(map),
      controls: [...map.querySelectorAll('.leaflet-control')].map(rect),
      labels: [...map.querySelectorAll('.graticule-label')].filter((l) => !l.hidden).map(rect),
    };
  })()`);
}

/**
 * Every label shown is whole: a full degree value, inside the map, not under a control nor another
 * label. Returns the texts shown.
 */
async function assertLabelsWhole(page: Page, mapName: string, where: string): Promise<string[]> {
  await painted(page);
  const { frame, controls, labels } = await measureLabels(page, mapName);
  assert.ok(labels.length >= 2, `${where}: labels are shown (${labels.length})`);
  const overlaps = (a: Rect, b: Rect): boolean =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  labels.forEach((label, index) => {
    assert.match(label.text, /^-?\d+(\.\d+)?°$/, `${where}: "${label.text}" is a whole degree value`);
    assert.ok(!label.overflows, `${where}: "${label.text}" fits its box`);
    assert.ok(
      label.left >= frame.left &&
        label.top >= frame.top &&
        label.right <= frame.right &&
        label.bottom <= frame.bottom,
      `${where}: "${label.text}" ${JSON.stringify(label)} lies inside the map ${JSON.stringify(frame)}`,
    );
    for (const control of controls) {
      assert.ok(!overlaps(label, control), `${where}: "${label.text}" is not under a control`);
    }
    for (const other of labels.slice(index + 1)) {
      assert.ok(!overlaps(label, other), `${where}: "${label.text}" and "${other.text}" do not overlap`);
    }
  });
  return labels.map((l) => l.text);
}

describe('coordinates typed in the "Go to" box', () => {
  test('decimal degrees, latitude first, with or without a comma or hemisphere letters', () => {
    const berlin = { lat: 52.52, lng: 13.405 };
    for (const text of [
      '52.52, 13.405',
      '52.52 13.405',
      ' 52.52 ;13.405 ',
      '52.52N 13.405E',
      'N 52.52, E 13.405',
      '52.52° N 13.405° E',
      '13.405E 52.52N',
    ]) {
      assert.deepEqual(parseCoordinates(text), berlin, text);
    }
    assert.deepEqual(parseCoordinates('33.9 S, 151.2 E'), { lat: -33.9, lng: 151.2 });
    assert.deepEqual(parseCoordinates('-33.9 -70.6'), { lat: -33.9, lng: -70.6 });
  });

  test('anything else is not coordinates (a name, one number, out of range, contradicting letters)', () => {
    for (const text of [
      'Berlin',
      'Depot 7',
      '52.52',
      '52.52, 13.405, 3',
      '91, 0',
      '0, 181',
      '52.52N 13.405N',
      '-52.52N 13.405E',
      '52,52 13,405',
    ]) {
      assert.equal(parseCoordinates(text), null, text);
    }
  });
});

describe('dashboard: map tools', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let geocoder: FakeGeocoder;

  before(async () => {
    geocoder = await startFakeGeocoder();
    ({ server, browser } = await startServerAndBrowser({ GEOCODER_URL: geocoder.url }));
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await geocoder?.close();
  });

  async function openGeofences(page: Page, account: Account, view: string): Promise<void> {
    await page.goto(`/login?next=${encodeURIComponent(`/geofences?view=${view}`)}`);
    await signIn(page, account.email, account.password);
    await geofenceMap(page).waitFor();
    await tool(page, TOOLS.polygon).waitFor();
    await goToBox(page).waitFor();
  }

  test('scale bar and graticule labels: whole, inside the map, clear of its controls, at every size', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'labels');
      await openGeofences(page, account, '52.52,13.405,15');
      const scale = page.locator('.leaflet-control-scale');
      await scale.waitFor();
      const lines = await scale.locator('.leaflet-control-scale-line').allTextContents();
      // en-GB: metres, and miles or feet beside them.
      assert.equal(lines.length, 2, `metric and imperial: ${lines.join(' | ')}`);
      assert.match(lines[0] ?? '', /^\d+ (m|km)$/);
      assert.match(lines[1] ?? '', /^\d+ (ft|mi)$/);

      const texts = await assertLabelsWhole(page, 'Geofence map', 'Berlin, zoom 15');
      // Lines every 0.01° here: Berlin's longitudes and latitudes, named with two decimals.
      assert.ok(
        texts.some((t) => /^13\.4\d°$/.test(t)),
        `a longitude near 13.4°: ${texts.join(' ')}`,
      );
      assert.ok(
        texts.some((t) => /^52\.5\d°$/.test(t)),
        `a latitude near 52.5°: ${texts.join(' ')}`,
      );
      await axe(page);
      await screenshot(page, 'map-tools-labels');

      await page.setViewportSize(PHONE);
      await geofenceMap(page).scrollIntoViewIfNeeded();
      await assertLabelsWhole(page, 'Geofence map', 'phone, zoom 15');
      await page.setViewportSize(LAPTOP);

      // Zoomed out, across the antimeridian: whole degrees, each named once per copy of the world.
      await showView(page, { lat: 10, lng: 170, zoom: 3 });
      const world = await assertLabelsWhole(page, 'Geofence map', 'zoom 3 at 170° E');
      assert.ok(
        world.every((t) => Math.abs(Number.parseFloat(t)) <= 180),
        `longitudes named within ±180°: ${world.join(' ')}`,
      );
      await screenshot(page, 'map-tools-world');
    }));

  test('"Go to": coordinates move the map there; a geofence’s name fits it into view', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'goto');
      await httpExpect(201, base, 'POST', '/geofences', {
        token: account.token,
        body: { name: 'Harbour depot', geometry: { type: 'Polygon', coordinates: [DEPOT] } },
      });
      await openGeofences(page, account, '52.52,13.405,15');
      const box = goToBox(page);

      await box.fill('48.8566 N, 2.3522 E');
      await page.getByRole('option', { name: /^48\.85660, 2\.35220\s*Coordinates$/ }).waitFor();
      await axe(page);
      await box.press('Enter');
      await waitForCentre(page, 48.8566, 2.3522);
      assert.equal(currentView(page).zoom, 16, 'a point is shown close up');

      await box.fill('harbour');
      const option = page.getByRole('option', { name: /^Harbour depot\s*Geofence$/ });
      await option.waitFor();
      await axe(page);
      await screenshot(page, 'map-tools-go-to');
      await option.click();
      await waitForCentre(page, 53.5425, 9.985, 1e-3);
      // Fitted: every corner in view, and the depot (700 m × 550 m) more than a speck.
      for (const [lng, lat] of DEPOT) await pixelOf(page, [lng, lat]);
      const west = await pixelOf(page, [9.98, 53.5425]);
      const east = await pixelOf(page, [9.99, 53.5425]);
      const mapBox = await geofenceMap(page).boundingBox();
      assert.ok(mapBox && east.x - west.x > mapBox.width / 3, 'the depot fills much of the map');
      assert.ok(
        !geocoder.asked.some((q) => q.get('q')?.includes('48.8566')),
        'typed coordinates are not sent to the geocoder',
      );
    }));

  test('"Go to" a place: the browser asks the geocoder (allowed by the CSP) and the map fits it', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'place');
      await openGeofences(page, account, '48.8566,2.3522,12');
      const box = goToBox(page);
      await box.fill('Brandenburger Tor');
      const option = page.getByRole('option', { name: /^Brandenburger Tor, Pariser Platz.*\s*Place$/ });
      await option.waitFor();
      const asked = geocoder.asked.at(-1);
      assert.equal(asked?.get('q'), 'Brandenburger Tor');
      assert.equal(asked?.get('format'), 'jsonv2');
      assert.equal(asked?.get('limit'), '5');
      await axe(page);
      await screenshot(page, 'map-tools-place');
      await option.click();
      await waitForCentre(page, 52.51625, 13.3777, 2e-4);
      assert.equal(currentView(page).zoom, 17, 'a small place is shown at the closest place zoom');
    }));

  test('"Go to" a device on the Devices page centres it', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'device');
      const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
        token: account.token,
        body: { name: 'Van 7' },
      });
      await httpExpect(201, base, 'POST', `/devices/${device.id}/locations`, {
        token: account.token,
        body: { coordinates: [11.575, 48.137] },
      });
      await page.goto(`/login?next=${encodeURIComponent('/devices?view=52.52,13.405,12')}`);
      await signIn(page, account.email, account.password);
      await page.getByRole('application', { name: 'Device map' }).waitFor();
      const box = goToBox(page);
      await box.fill('van');
      const option = page.getByRole('option', { name: /^Van 7\s*Device$/ });
      await option.waitFor();
      await page.locator('.leaflet-control-scale').waitFor();
      await axe(page);
      await screenshot(page, 'map-tools-devices');
      await option.click();
      await waitForCentre(page, 48.137, 11.575);
    }));

  test('drawing a circle shows its radius beside the pointer', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'radius');
      await openGeofences(page, account, '52.52,13.405,15');
      await tool(page, TOOLS.circle).click();
      const centre = await pixelOf(page, [13.405, 52.52]);
      const edge = await pixelOf(page, northOf([13.405, 52.52], 120));
      // Leaflet passes pointer moves on at most every 32 ms: a pause between moves, as a hand makes.
      for (const { x, y } of [centre, centre]) {
        await page.mouse.move(x, y);
        await page.waitForTimeout(50);
      }
      await page.mouse.click(centre.x, centre.y);
      for (const { x, y } of [{ x: edge.x, y: edge.y + 5 }, edge]) {
        await page.mouse.move(x, y);
        await page.waitForTimeout(50);
      }
      const size = page.locator('.draw-size');
      await size.waitFor();
      const text = (await size.textContent()) ?? '';
      const metres = Number(/^Radius (\d+) m$/.exec(text)?.[1]);
      // A pixel is about 3 m at this zoom.
      assert.ok(Math.abs(metres - 120) <= 4, `"${text}" says about 120 m`);
      await screenshot(page, 'map-tools-radius');
      await page.mouse.click(edge.x, edge.y);
      await size.waitFor({ state: 'detached' });
    }));
});
