/**
 * The webhooks area in a real browser against the real server (its in-process delivery worker,
 * a retry schedule of milliseconds, loopback targets allowed): a webhook is created through the
 * form and answers a test event; its secret is revealed, copied and rotated. A real HTTP receiver
 * on 127.0.0.1 checks every signature and then answers 500; events made by locations sent with an
 * API key fail every attempt and land in the dead-letter queue. The receiver recovers, the page's
 * "select all → Retry selected" queues them in chunks with progress, and every new delivery
 * succeeds; the failed deliveries' timelines show the 500s with the receiver's body. Filters live
 * in the URL and survive a reload; every page of the area passes axe and is photographed.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { verifySignature } from '../../src/webhooks/signature.ts';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';

const DOWN_BODY = 'receiver down: disk full (test 7f3a)';
/** In and out of the Depot six times: twelve events (enter, exit, …), two chunks of the bulk retry. */
const CROSSINGS = 6;
const EVENTS = CROSSINGS * 2;
/** Attempts per delivery: the first and one per WEBHOOK_RETRY_SCHEDULE entry. */
const ATTEMPTS = 3;
const DEPOT = { lng: 13.4, lat: 52.5 };

interface Hit {
  body: string;
  headers: http.IncomingHttpHeaders;
  verified: boolean;
  answered: number;
}

/** A webhook receiver that checks `X-SVC-Signature` against the secret it was told, then answers as set. */
class Receiver {
  readonly hits: Hit[] = [];
  secret = '';
  status = 204;
  private readonly server: http.Server;
  private constructor(server: http.Server) {
    this.server = server;
  }

  static async start(): Promise<Receiver> {
    const server = http.createServer();
    const receiver = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const header = req.headers['x-svc-signature'];
        const verified = verifySignature(raw, typeof header === 'string' ? header : null, receiver.secret);
        const answered = verified ? receiver.status : 401;
        receiver.hits.push({ body: raw.toString('utf8'), headers: req.headers, verified, answered });
        res.writeHead(answered, { 'content-type': 'text/plain' });
        res.end(answered === 204 ? undefined : verified ? DOWN_BODY : 'bad signature');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/geofence`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
    await once(this.server, 'close').catch(() => undefined);
  }
}

/** Clicks "Refresh" until `target` shows (the worker delivers in the background), bounded. */
async function refreshUntil(page: Page, target: Locator, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await target.count()) > 0) return;
    assert.ok(Date.now() < deadline, `never showed: ${what}`);
    await page.getByRole('button', { name: 'Refresh', exact: true }).first().click();
    await page.waitForTimeout(300);
  }
}

async function rowCount(table: Locator): Promise<number> {
  return table.locator('tbody tr').count();
}

describe('dashboard: webhooks, deliveries and dead letters', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let receiver: Receiver;

  before(async () => {
    receiver = await Receiver.start();
    ({ server, browser } = await startServerAndBrowser({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '150ms,150ms',
      WEBHOOK_POLL_INTERVAL: '100ms',
    }));
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await receiver?.close();
  });

  test('create → test event → secret → failures dead-lettered → bulk retry succeeds → timelines', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'hooks');
      const depot = await httpExpect<{ id: string }>(201, base, 'POST', '/geofences', {
        token: account.token,
        body: {
          name: 'Depot',
          geometry: { type: 'Circle', coordinates: [DEPOT.lng, DEPOT.lat], radius: 200 },
        },
      });
      await httpExpect(201, base, 'POST', '/geofences', {
        token: account.token,
        body: { name: 'Harbour', geometry: { type: 'Circle', coordinates: [9.99, 53.54], radius: 200 } },
      });

      await page.goto('/webhooks');
      await page.waitForURL('/login?next=%2Fwebhooks');
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
      await page.getByText('No webhooks yet.').waitFor();
      const subnav = page.getByRole('navigation', { name: 'Webhooks' });
      assert.equal(
        await subnav.getByRole('link', { name: 'Endpoints' }).getAttribute('aria-current'),
        'page',
      );
      await axe(page);
      await screenshot(page, 'webhooks-empty');

      // Created through the form, with every kind of setting.
      await page.getByRole('link', { name: 'New webhook' }).click();
      await page.getByRole('heading', { level: 1, name: 'New webhook' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Dispatch');
      await page.getByLabel('URL', { exact: true }).fill(receiver.url);
      await page.getByLabel('Method', { exact: true }).selectOption('PUT');
      await page.getByLabel('Timeout (seconds)').fill('5');
      await page.getByLabel('Rate limit (deliveries per minute)').fill('600');
      await page.getByRole('checkbox', { name: /geofence\.dwell/ }).check();
      await page.getByRole('radio', { name: 'Only events of these geofences' }).check();
      const picker = page.getByRole('combobox', { name: 'Add a geofence' });
      await picker.fill('Dep');
      await page.getByRole('option', { name: 'Depot' }).click();
      await page
        .getByRole('list', { name: 'Chosen geofences' })
        .getByRole('button', { name: 'Remove Depot' })
        .waitFor();
      await page.getByRole('button', { name: 'Add header' }).click();
      await page.getByLabel('Header 1 name').fill('X-Team');
      await page.getByLabel('Header 1 value').fill('night shift');
      await axe(page);
      await screenshot(page, 'webhooks-new', page.getByRole('button', { name: 'Create webhook' }));
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await page.waitForURL(/\/webhooks\/[0-9a-f-]{36}$/);
      const webhookId = new URL(page.url()).pathname.split('/').pop() ?? '';
      await page.getByRole('heading', { level: 1, name: 'Dispatch' }).waitFor();
      await page.getByRole('status').filter({ hasText: 'Webhook created.' }).waitFor();
      receiver.secret = (await page.getByTestId('webhook-secret').textContent()) ?? '';
      assert.match(receiver.secret, /^whsec_/);

      const saved = await httpExpect<Record<string, unknown>>(200, base, 'GET', `/webhooks/${webhookId}`, {
        token: account.token,
      });
      assert.equal(saved.method, 'PUT');
      assert.equal(saved.timeout_seconds, 5);
      assert.equal(saved.rate_limit_per_minute, 600);
      assert.deepEqual(saved.events, ['geofence.enter', 'geofence.exit', 'geofence.dwell']);
      assert.deepEqual(saved.geofence_ids, [depot.id]);
      assert.deepEqual(saved.headers, { 'X-Team': 'night shift' });
      assert.equal(saved.enabled, true);
      // The saved settings come back into the form, geofences by name.
      await page
        .getByRole('list', { name: 'Chosen geofences' })
        .getByRole('button', { name: 'Remove Depot' })
        .waitFor();
      assert.equal(await page.getByLabel('Header 1 value').inputValue(), 'night shift');

      // A test event reaches the receiver, signed, with the custom header.
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.getByRole('status').filter({ hasText: 'Test event delivered' }).waitFor();
      const testHit = receiver.hits.at(-1);
      assert.ok(testHit?.verified, 'the test event is signed with the secret shown');
      assert.equal(testHit.headers['x-team'], 'night shift');
      assert.match(testHit.body, /"webhook\.test"/);
      await axe(page);
      await screenshot(page, 'webhooks-test-sent');

      // The secret: hidden, revealed, copied, rotated (after a confirmation).
      await page.getByRole('button', { name: 'Hide' }).click();
      assert.equal(await page.getByTestId('webhook-secret').count(), 0);
      await page.getByRole('button', { name: 'Reveal' }).click();
      assert.equal(await page.getByTestId('webhook-secret').textContent(), receiver.secret);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByRole('status').filter({ hasText: 'The secret is on your clipboard.' }).waitFor();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), receiver.secret);
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      const rotate = page.getByRole('group', { name: /Rotate the secret\?/ });
      await axe(page);
      await rotate.getByRole('button', { name: 'Rotate' }).click();
      await page.getByRole('status').filter({ hasText: 'Secret rotated' }).waitFor();
      const rotated = (await page.getByTestId('webhook-secret').textContent()) ?? '';
      assert.match(rotated, /^whsec_/);
      assert.notEqual(rotated, receiver.secret);
      const revealed = await httpExpect<{ secret: string }>(
        200,
        base,
        'GET',
        `/webhooks/${webhookId}/secret`,
        {
          token: account.token,
        },
      );
      assert.equal(revealed.secret, rotated);
      receiver.secret = rotated;

      // The switch turns deliveries off and on again.
      const enabled = page.getByRole('switch', { name: 'Enabled' });
      await enabled.click();
      await page.getByRole('status').filter({ hasText: 'Disabled: no new deliveries.' }).waitFor();
      assert.equal(await enabled.getAttribute('aria-checked'), 'false');
      await enabled.click();
      await page.getByRole('status').filter({ hasText: 'Enabled: new events are delivered.' }).waitFor();
      assert.equal(await enabled.getAttribute('aria-checked'), 'true');

      // The receiver fails; a device crosses the Depot, its locations sent with an API key.
      receiver.status = 500;
      const key = await httpExpect<{ key: string }>(201, base, 'POST', '/account/api-keys', {
        token: account.token,
        body: { name: 'tracker', scopes: ['locations:write'] },
      });
      const start = Date.now() - 120_000;
      const locations = Array.from({ length: EVENTS + 1 }, (_v, i) => ({
        device_external_id: 'truck-7',
        coordinates: i % 2 === 1 ? [DEPOT.lng, DEPOT.lat] : [DEPOT.lng + 0.1, DEPOT.lat],
        timestamp: new Date(start + i * 1000).toISOString(),
      }));
      const batch = await httpExpect<{ accepted: number; events: unknown[] }>(
        200,
        base,
        'POST',
        '/locations/batch',
        {
          apiKey: key.key,
          body: { locations },
        },
      );
      assert.equal(batch.events.length, EVENTS);

      // Every attempt fails; the deliveries are dead-lettered.
      await subnav.getByRole('link', { name: 'Dead letters' }).click();
      await page.getByRole('heading', { level: 1, name: 'Dead letters' }).waitFor();
      const dlqTable = page.getByRole('table', { name: 'Dead-letter entries, newest first' });
      await refreshUntil(page, dlqTable.locator(`tbody tr:nth-child(${EVENTS})`), `${EVENTS} dead letters`);
      const stats = page.getByRole('region', { name: 'Statistics' });
      await stats.getByText(`Dispatch: ${EVENTS} entries`).waitFor();
      assert.equal(receiver.hits.length, 1 + EVENTS * ATTEMPTS);
      assert.ok(
        receiver.hits.every((h) => h.verified),
        'every delivery is signed with the current secret',
      );
      assert.deepEqual(
        receiver.hits.slice(1).map((h) => h.answered),
        Array(EVENTS * ATTEMPTS).fill(500),
      );
      await dlqTable.getByText('HTTP 500').first().waitFor();
      await axe(page);
      await screenshot(page, 'webhooks-dead-letters');

      // Filters go to the URL and survive a reload.
      await page.getByLabel('Webhook', { exact: true }).selectOption({ label: 'Dispatch' });
      await page.getByLabel('Retried', { exact: true }).selectOption('false');
      await page.waitForURL((url) => url.searchParams.get('requeued') === 'false');
      assert.equal(new URL(page.url()).searchParams.get('webhook'), webhookId);
      await page.reload();
      await page.waitForURL((url) => url.pathname === '/webhooks/dead-letters');
      assert.equal(new URL(page.url()).searchParams.get('requeued'), 'false');
      assert.equal(await page.getByLabel('Retried', { exact: true }).inputValue(), 'false');
      await page
        .getByLabel('Webhook', { exact: true })
        .locator('option:checked', { hasText: 'Dispatch' })
        .waitFor({ state: 'attached' });
      assert.equal(await page.getByLabel('Webhook', { exact: true }).inputValue(), webhookId);
      await dlqTable.locator(`tbody tr:nth-child(${EVENTS})`).waitFor();

      // The receiver recovers; all of them are retried from the page, in chunks, with progress.
      receiver.status = 204;
      // The ids of each request, counted from its answer (the request body is sent as a stream).
      const bulkRequests: Array<Promise<number>> = [];
      page.on('response', (response) => {
        if (response.request().method() === 'POST' && response.url().endsWith('/api/v1/webhooks/dlq/retry'))
          bulkRequests.push(
            response
              .json()
              .then(
                (body: { retried: unknown[]; failed: unknown[] }) => body.retried.length + body.failed.length,
              ),
          );
      });
      await page.getByRole('checkbox', { name: 'Select all on this page' }).check();
      await page.getByRole('button', { name: `Retry selected (${EVENTS})` }).click();
      const progress = page.getByTestId('bulk-progress');
      await progress
        .filter({ hasText: `${EVENTS} of ${EVENTS} queued: done, ${EVENTS} retried, 0 failed.` })
        .waitFor();
      assert.equal(await progress.getAttribute('aria-live'), 'polite');
      assert.equal(await page.locator('progress').getAttribute('value'), String(EVENTS));
      assert.deepEqual(await Promise.all(bulkRequests), [10, EVENTS - 10], 'the ids go in chunks of ten');
      await page
        .getByRole('list', { name: 'Outcome per entry' })
        .getByRole('link')
        .nth(EVENTS - 1)
        .waitFor();
      // Each outcome names its entry (what failed, where, when), not a prefix of an id.
      const outcomeNames = await page
        .getByRole('list', { name: 'Outcome per entry' })
        .getByRole('link')
        .allTextContents();
      for (const name of outcomeNames) assert.match(name, /^geofence\.(enter|exit) to Dispatch, failed \d/);
      // The list was loaded again: nothing is waiting for a retry any more.
      await page.getByText('No dead letters match these filters.').waitFor();
      await stats.getByText('Retried').locator('xpath=..').getByText(String(EVENTS)).waitFor();
      await axe(page);
      await screenshot(page, 'webhooks-bulk-retried', page.getByRole('region', { name: /Retry of/ }));

      // Every new delivery succeeds: the deliveries list, filtered, shows them.
      await subnav.getByRole('link', { name: 'Deliveries' }).click();
      await page.getByRole('heading', { level: 1, name: 'Deliveries' }).waitFor();
      await page.getByLabel('Webhook', { exact: true }).selectOption({ label: 'Dispatch' });
      await page.getByLabel('Status', { exact: true }).selectOption('success');
      await page.getByLabel('Event type', { exact: true }).selectOption('geofence.enter');
      const deliveries = page.getByRole('table', { name: 'Deliveries, newest first' });
      await refreshUntil(page, deliveries.locator(`tbody tr:nth-child(${CROSSINGS})`), 'the retried enters');
      await page.getByLabel('Event type', { exact: true }).selectOption('');
      await refreshUntil(page, deliveries.locator(`tbody tr:nth-child(${EVENTS + 1})`), 'every success');
      assert.equal(await rowCount(deliveries), EVENTS + 1, 'the retried deliveries and the test event');
      assert.equal(await deliveries.locator('tbody .badge-success').count(), EVENTS + 1);
      assert.equal(receiver.hits.filter((h) => h.answered === 204).length, EVENTS + 1);
      await axe(page);
      await screenshot(page, 'webhooks-deliveries');

      // The failed ones, by response class; the filter survives a reload.
      await page.getByLabel('Status', { exact: true }).selectOption('');
      await page.getByLabel('Response', { exact: true }).selectOption('5xx');
      await page.waitForURL((url) => url.searchParams.get('status_class') === '5xx');
      await page.reload();
      await page.waitForURL((url) => url.pathname === '/webhooks/deliveries');
      assert.equal(await page.getByLabel('Response', { exact: true }).inputValue(), '5xx');
      await deliveries.locator(`tbody tr:nth-child(${EVENTS})`).waitFor();
      assert.equal(await rowCount(deliveries), EVENTS);
      assert.equal(await deliveries.locator('tbody .badge-failed').count(), EVENTS);

      // A failed delivery's timeline: three attempts, each the receiver's 500 with its body.
      await deliveries.locator('tbody tr').first().getByRole('link').first().click();
      await page.waitForURL(/\/webhooks\/deliveries\/[0-9a-f-]{36}$/);
      const timeline = page.locator('ol.timeline > li');
      await timeline.nth(ATTEMPTS - 1).waitFor();
      assert.equal(await timeline.count(), ATTEMPTS);
      for (let n = 0; n < ATTEMPTS; n++) {
        const attempt = timeline.nth(n);
        await attempt.getByRole('heading', { name: `Attempt ${n + 1} HTTP 500` }).waitFor();
        assert.equal(await attempt.locator('pre').first().textContent(), DOWN_BODY);
      }
      const first = timeline.first();
      await first.getByText('Request headers').click();
      await first.getByText(/^x-svc-signature$/i).waitFor();
      await first.getByText(/^x-team$/i).waitFor();
      await first.getByText('Request body').click();
      await first.getByText(/"event": "geofence\.(enter|exit)"/).waitFor();
      await axe(page);
      await screenshot(page, 'webhooks-delivery-timeline');

      // "Retry now" on the failed delivery: a new delivery with the same payload, which succeeds.
      await page.getByRole('button', { name: 'Retry now' }).click();
      await page.getByRole('status').filter({ hasText: 'Retry queued as a new delivery' }).waitFor();
      await page.getByRole('link', { name: 'Follow the new delivery' }).click();
      await page.locator('.page-head .badge-success').waitFor({ timeout: 15_000 });
      await page.getByRole('heading', { name: 'Attempt 1 HTTP 204' }).waitFor();

      // The webhook's own page lists its deliveries too; then it is deleted.
      await page.getByRole('link', { name: 'Dispatch' }).first().click();
      await page.getByRole('heading', { level: 1, name: 'Dispatch' }).waitFor();
      const own = page.getByRole('table', { name: "This webhook's deliveries, newest first" });
      await own.locator('tbody tr').first().waitFor();
      await axe(page);
      await screenshot(page, 'webhooks-webhook-page', own);
      await page.getByRole('button', { name: 'Delete webhook' }).click();
      await page
        .getByRole('group', { name: /Delete “Dispatch”\?/ })
        .getByRole('button', { name: 'Delete' })
        .click();
      await page.waitForURL('/webhooks');
      await page.getByText('No webhooks yet.').waitFor();
    }));

  test('the list filters by state in the URL; a refused setting shows the API message', () =>
    inPage(browser, base, async (page, watch) => {
      const account: Account = await registerAccount(base, 'hooklist');
      for (const [name, enabled] of [
        ['Billing sync', true],
        ['Legacy CRM', false],
      ] as const) {
        await httpExpect(201, base, 'POST', '/webhooks', {
          token: account.token,
          body: { name, url: receiver.url, enabled },
        });
      }
      await page.goto('/login?next=%2Fwebhooks%3Fenabled%3Dfalse');
      await signIn(page, account.email, account.password);
      const table = page.getByRole('table', { name: 'Webhooks, newest first' });
      await table.getByRole('link', { name: 'Legacy CRM' }).waitFor();
      assert.equal(await rowCount(table), 1);
      assert.equal(await page.getByLabel('Show', { exact: true }).inputValue(), 'false');
      await page.getByLabel('Show', { exact: true }).selectOption('');
      await table.getByRole('link', { name: 'Billing sync' }).waitFor();
      assert.equal(await rowCount(table), 2);
      await axe(page);
      await screenshot(page, 'webhooks-list');

      // A reserved header is refused by the API; its message shows next to the form.
      await table.getByRole('link', { name: 'Billing sync' }).click();
      await page.getByRole('heading', { level: 1, name: 'Billing sync' }).waitFor();
      watch.allowHttpError(400, /^\/api\/v1\/webhooks\/[0-9a-f-]+$/);
      watch.allowHttpError(422, /^\/api\/v1\/webhooks\/[0-9a-f-]+$/);
      await page.getByRole('button', { name: 'Add header' }).click();
      await page.getByLabel('Header 1 name').fill('Content-Type');
      await page.getByLabel('Header 1 value').fill('text/plain');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: /Content-Type/i })
        .waitFor();
      await axe(page);
    }));
});
