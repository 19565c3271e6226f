/**
 * The rules of contract §4.5 on the Geofences page, in a real browser against the real server: on a
 * concave polygon, a dwell below its range is refused by the server with the message at the field;
 * text that is not a number is refused at the field; a save sends only the rules changed in the form;
 * dwell and exit buffer are saved and still there after a reload (a new sign-in); the exit buffer
 * is drawn as a dashed ring around the polygon that follows the field as it is typed; a device
 * located inside is listed under "Devices inside now", linked to the Devices page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';
import { geofenceMap } from './geofence-drawing.ts';

/** Berlin at zoom 16: the L below is a few hundred pixels across, its 50 m buffer ~20 px wide. */
const VIEW = '52.52,13.405,16';
/** A concave L (its inner corner at 13.405, 52.52). */
const L_SHAPE = [
  [13.401, 52.518],
  [13.409, 52.518],
  [13.409, 52.52],
  [13.405, 52.52],
  [13.405, 52.522],
  [13.401, 52.522],
  [13.401, 52.518],
];
const INSIDE = [13.402, 52.519];

interface GeofenceOut {
  id: string;
  dwell_seconds: number | null;
  exit_buffer_m: number | null;
  max_accuracy_m: number | null;
}

async function openGeofence(page: Page, account: Account, id: string): Promise<void> {
  await page.goto(`/login?next=${encodeURIComponent(`/geofences?view=${VIEW}&selected=${id}`)}`);
  await signIn(page, account.email, account.password);
  await page.getByRole('heading', { level: 1, name: 'Geofences' }).waitFor();
  await geofenceMap(page).waitFor();
  await page.getByRole('heading', { level: 2, name: 'Edit “Yard”' }).waitFor();
}

/** The dashed exit-buffer ring: one SVG path with a dash pattern; its box on the page. */
async function bufferRing(page: Page): Promise<{ width: number; height: number; dash: string }> {
  const ring = geofenceMap(page).locator('path.exit-buffer');
  await ring.waitFor();
  assert.equal(await ring.count(), 1);
  const dash = (await ring.getAttribute('stroke-dasharray')) ?? '';
  const box = await ring.boundingBox();
  assert.ok(box, 'the ring is on the page');
  return { width: box.width, height: box.height, dash };
}

describe('dashboard: geofence rules (§4.5)', () => {
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

  test('dwell and exit buffer on a polygon: refused out of range, saved, kept, drawn; devices inside', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'rules');
      const fence = await httpExpect<GeofenceOut>(201, base, 'POST', '/geofences', {
        token: account.token,
        body: { name: 'Yard', geometry: { type: 'Polygon', coordinates: [L_SHAPE] } },
      });
      assert.equal(fence.exit_buffer_m, null);
      await openGeofence(page, account, fence.id);
      const form = page.getByRole('region', { name: 'Edit “Yard”' });
      const dwell = form.getByLabel('Dwell (seconds)');
      const buffer = form.getByLabel('Exit buffer (metres)');
      assert.equal(await dwell.inputValue(), '');
      assert.equal(await buffer.inputValue(), '');
      assert.equal(await geofenceMap(page).locator('path.exit-buffer').count(), 0, 'no buffer, no ring');

      // Out of range: the server's message, at the field.
      watch.allowHttpError(422, `/api/v1/geofences/${fence.id}`);
      await dwell.fill('30');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await form.getByRole('alert').waitFor();
      assert.equal(await dwell.getAttribute('aria-invalid'), 'true');
      const describedBy = (await dwell.getAttribute('aria-describedby')) ?? '';
      const message = await page.locator(`[id="${describedBy.split(' ').at(-1)}"]`).textContent();
      assert.match(message ?? '', /60/, `the range in the message: ${message}`);

      // The ring appears as the buffer is typed, and grows with it.
      await dwell.fill('300');
      await buffer.fill('50');
      const small = await bufferRing(page);
      assert.match(small.dash, /^4,?\s*6$/);
      await buffer.fill('120');
      let large = await bufferRing(page);
      for (let i = 0; i < 20 && large.width <= small.width; i++) large = await bufferRing(page);
      // At zoom 16 in Berlin a pixel is ~1.46 m: 70 m more on each side is ~96 px wider.
      assert.ok(large.width - small.width > 80, `${small.width} → ${large.width}`);
      await axe(page);
      await screenshot(page, 'geofence-rules', form.getByLabel('Exit buffer (metres)'));

      await form.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved “Yard”.' }).waitFor();
      const saved = await httpExpect<GeofenceOut>(200, base, 'GET', `/geofences/${fence.id}`, {
        token: account.token,
      });
      assert.deepEqual(
        [saved.dwell_seconds, saved.exit_buffer_m, saved.max_accuracy_m],
        [300, 120, null],
        'accuracy left empty stays off',
      );

      // Text that is not a number reads as '' in a number field: refused at the field, not saved
      // as "rule off".
      const accuracy = form.getByLabel('Maximum accuracy (metres)');
      await accuracy.pressSequentially('1e');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await form.getByText('Enter a number, or leave empty to switch the rule off.').waitFor();
      assert.equal(await accuracy.getAttribute('aria-invalid'), 'true');

      // A save sends only the rules changed in the form: one changed elsewhere meanwhile stays.
      await httpExpect(200, base, 'PATCH', `/geofences/${fence.id}`, {
        token: account.token,
        body: { max_accuracy_m: 25 },
      });
      await accuracy.fill('');
      await dwell.fill('400');
      const patched = page.waitForResponse(
        (r) => r.url().endsWith(`/api/v1/geofences/${fence.id}`) && r.request().method() === 'PATCH',
      );
      await form.getByRole('button', { name: 'Save changes' }).click();
      assert.equal((await patched).status(), 200);
      const merged = await httpExpect<GeofenceOut>(200, base, 'GET', `/geofences/${fence.id}`, {
        token: account.token,
      });
      assert.deepEqual([merged.dwell_seconds, merged.exit_buffer_m, merged.max_accuracy_m], [400, 120, 25]);
      await form.getByText('Enter a number', { exact: false }).waitFor({ state: 'detached' });
      assert.equal(await accuracy.inputValue(), '25', 'the form shows the rule changed elsewhere');
      await dwell.fill('300');
      const restored = page.waitForResponse(
        (r) => r.url().endsWith(`/api/v1/geofences/${fence.id}`) && r.request().method() === 'PATCH',
      );
      await form.getByRole('button', { name: 'Save changes' }).click();
      assert.equal((await restored).status(), 200);

      // A device reports from inside: it is listed, linked to its page.
      const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
        token: account.token,
        body: { name: 'Forklift 7' },
      });
      await httpExpect(201, base, 'POST', `/devices/${device.id}/locations`, {
        token: account.token,
        body: { coordinates: INSIDE },
      });

      // A reload stays signed in (the session cookie) and comes back to the same geofence.
      await page.reload();
      await page.getByRole('heading', { level: 2, name: 'Edit “Yard”' }).waitFor();
      const again = page.getByRole('region', { name: 'Edit “Yard”' });
      assert.equal(await again.getByLabel('Dwell (seconds)').inputValue(), '300');
      assert.equal(await again.getByLabel('Exit buffer (metres)').inputValue(), '120');
      assert.equal(await again.getByLabel('Maximum accuracy (metres)').inputValue(), '25');
      const kept = await bufferRing(page);
      assert.ok(Math.abs(kept.width - large.width) < 3, `${kept.width} ≈ ${large.width}`);

      const inside = page.getByRole('region', { name: 'Devices inside now' });
      const link = inside.getByRole('link', { name: 'Forklift 7' });
      await link.waitFor();
      assert.equal(await link.getAttribute('href'), `/devices?device=${device.id}`);
      await axe(page);
      await screenshot(page, 'geofence-devices-inside', inside);
      await link.click();
      await page.getByRole('heading', { level: 1, name: 'Devices' }).waitFor();
      assert.equal(new URL(page.url()).searchParams.get('device'), device.id);
    }));
});
