/**
 * The Geofences page in a real browser against the real server: a bowtie drawn with the mouse is
 * refused by the server, and the page says why in the form and pins the crossing on the map where
 * it is; a GeoJSON file with one bad feature imports the others and reports the bad one with the
 * server's reason; the export downloads the workspace's geofences as a FeatureCollection. The page
 * is checked with axe and photographed empty, with the form open, and with an import report.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';
import { drawPolygon, geofenceMap, type LngLat, pixelOf } from './geofence-drawing.ts';

/** Berlin, zoomed in far enough that a few hundred metres are a few hundred pixels. */
const VIEW = '52.52,13.405,15';

/**
 * A bowtie: its first and third edges cross at CROSSING, the middle of the view (so the message
 * pinned there has room above it and the map need not move to show it).
 */
const BOWTIE: LngLat[] = [
  [13.401, 52.5185],
  [13.409, 52.5215],
  [13.409, 52.5185],
  [13.401, 52.5215],
];
const CROSSING: LngLat = [13.405, 52.52];

interface ListPage {
  results: Array<{ name: string; geometry: { type: string } }>;
}

async function openGeofences(page: Page, account: Account): Promise<void> {
  await page.goto(`/login?next=${encodeURIComponent(`/geofences?view=${VIEW}`)}`);
  await signIn(page, account.email, account.password);
  await page.getByRole('heading', { level: 1, name: 'Geofences' }).waitFor();
  await geofenceMap(page).waitFor();
  await page.getByRole('button', { name: 'Draw polygon', exact: true }).waitFor();
}

describe('dashboard: geofences', () => {
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

  test('a bowtie is refused: the server’s message in the form, pinned on the map at the crossing', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'bowtie');
      await openGeofences(page, account);
      await page
        .getByRole('status')
        .filter({ hasText: 'No geofences yet: draw one on the map, type one in, or import a file.' })
        .waitFor();
      await axe(page);
      await screenshot(page, 'geofences-empty');

      await drawPolygon(page, BOWTIE);
      const form = page.getByRole('region', { name: 'New geofence' });
      await form.getByLabel('Name', { exact: true }).fill('Bowtie');
      await axe(page);
      await screenshot(page, 'geofences-form', form);

      watch.allowHttpError(400, '/api/v1/geofences');
      const answer = page.waitForResponse(
        (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v1/geofences',
      );
      await form.getByRole('button', { name: 'Create geofence' }).click();
      const refused = await answer;
      assert.equal(refused.status(), 400);
      const body = (await refused.json()) as {
        detail: string;
        error_code: string;
        details: { reason: string; location: [number, number] };
      };
      assert.equal(body.error_code, 'INVALID_GEOMETRY');
      assert.equal(body.details.reason, 'self_intersection');

      // The message, in the form's alert and under the geometry field (with the reason and place).
      const alert = form.getByRole('alert');
      await alert.waitFor();
      assert.equal(await alert.textContent(), body.detail);
      const geometryField = form.getByLabel('Geometry (GeoJSON)');
      assert.equal(await geometryField.getAttribute('aria-invalid'), 'true');
      assert.match(
        (await page.locator('.field-error').filter({ hasText: body.detail }).textContent()) ?? '',
        /self_intersection at 13\.40\d+, 52\.5\d+/,
      );

      // The server found the crossing where it was drawn: vertices land within a pixel or so of
      // where the mouse put them, ~3 m at this zoom.
      const [lng, lat] = body.details.location;
      assert.ok(
        Math.abs(lng - CROSSING[0]) < 0.0001 && Math.abs(lat - CROSSING[1]) < 0.0001,
        `at ${lng}, ${lat}`,
      );

      // The pinned message points at that place on the map: its tip within a few pixels of it.
      const pin = page.locator('.geometry-problem');
      await pin.waitFor();
      assert.equal(await pin.locator('.leaflet-popup-content').textContent(), body.detail);
      const tip = await pin.locator('.leaflet-popup-tip').boundingBox();
      assert.ok(tip, 'the pinned message has a tip');
      for (const where of [await pixelOf(page, body.details.location), await pixelOf(page, CROSSING)]) {
        const tipX = tip.x + tip.width / 2;
        const tipY = tip.y + tip.height;
        assert.ok(
          Math.abs(tipX - where.x) <= 3 && Math.abs(tipY - where.y) <= 4,
          `the tip (${tipX}, ${tipY}) points at (${where.x}, ${where.y})`,
        );
      }
      await axe(page);
      await screenshot(page, 'geofences-bowtie', form.getByRole('alert'));

      const list = await httpExpect<ListPage>(200, base, 'GET', '/geofences', { token: account.token });
      assert.deepEqual(list.results, [], 'nothing was stored');
    }));

  test('import: good features created, a bad one refused with the reason; export downloads them all', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'import');
      await openGeofences(page, account);
      const file = {
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            geometry: {
              type: 'Polygon',
              coordinates: [
                [
                  [13.4, 52.518],
                  [13.404, 52.518],
                  [13.404, 52.521],
                  [13.4, 52.521],
                  [13.4, 52.518],
                ],
              ],
            },
            properties: { name: 'Depot', external_id: 'depot-1' },
          },
          {
            type: 'Feature',
            geometry: {
              type: 'Polygon',
              coordinates: [[...BOWTIE, BOWTIE[0]]],
            },
            properties: { name: 'Crossed' },
          },
          {
            type: 'Feature',
            geometry: { type: 'Point', coordinates: [13.408, 52.52] },
            properties: { name: 'Yard', radius: 120 },
          },
        ],
      };
      await page.getByLabel('Import a GeoJSON file').setInputFiles({
        name: 'sites.geojson',
        mimeType: 'application/geo+json',
        buffer: Buffer.from(JSON.stringify(file)),
      });
      const report = page.locator('.import-report');
      await report
        .getByRole('status')
        .filter({ hasText: 'sites.geojson: 2 created, 0 updated, 1 refused.' })
        .waitFor();
      const rows = await report
        .getByRole('table', { name: 'Import report of sites.geojson' })
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
      assert.equal(rows.length, 3);
      assert.deepEqual(rows[0], ['0', 'Depot', 'created', '']);
      assert.deepEqual(rows[2], ['2', 'Yard', 'created', '']);
      const [index, name, outcome, why] = rows[1] ?? [];
      assert.deepEqual([index, name, outcome], ['1', 'Crossed', 'refused']);
      assert.match(why ?? '', /\(self_intersection at 13\.405\d*, 52\.52\d*\)$/);
      // The list and the map show what was imported.
      await page.getByRole('status').filter({ hasText: '2 geofences' }).waitFor();
      const listed = page.getByRole('region', { name: 'All geofences' }).getByRole('button');
      await listed.filter({ hasText: 'Depot' }).waitFor();
      await listed.filter({ hasText: 'Yard' }).waitFor();
      await axe(page);
      await screenshot(page, 'geofences-import-report', report);

      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Export GeoJSON' }).click();
      const file2 = await download;
      assert.equal(file2.suggestedFilename(), 'geofences.geojson');
      const saved = await file2.path();
      const exported = JSON.parse(fs.readFileSync(saved, 'utf8')) as {
        type: string;
        features: Array<{
          type: string;
          geometry: { type: string };
          properties: { name: string; external_id: string | null };
        }>;
      };
      assert.equal(exported.type, 'FeatureCollection');
      const byName = new Map(exported.features.map((f) => [f.properties.name, f]));
      assert.deepEqual([...byName.keys()].sort(), ['Depot', 'Yard']);
      assert.equal(byName.get('Depot')?.geometry.type, 'Polygon');
      assert.equal(byName.get('Depot')?.properties.external_id, 'depot-1');
      assert.equal(byName.get('Yard')?.geometry.type, 'Circle');
      // The export is what the API has.
      const list = await httpExpect<ListPage>(200, base, 'GET', '/geofences', { token: account.token });
      assert.deepEqual(list.results.map((g) => g.name).sort(), ['Depot', 'Yard']);
    }));
});
