/**
 * The event page in a real browser against the real server (its in-process dispatcher and delivery
 * worker, loopback targets allowed): a device enters the Depot; a subscribed webhook gets the event
 * and a workflow's `webhook` action sends it again. In the feed the event's row opens its page by
 * a click on the row and by the keyboard on its link; the page shows the map, the payload the
 * receiver got (less each delivery's own `id`), and both deliveries and the run, whose links open
 * their pages. Once the geofence is deleted the map says so and shows the point alone. Each state
 * passes axe and is photographed at laptop and phone size.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import type { Account, DashboardServer } from './dashboard-server.ts';
import { registerAccount } from './dashboard-server.ts';

const DEPOT = { lng: 13.4, lat: 52.5 };

/** A webhook receiver on loopback that keeps every body and answers 204. */
class Receiver {
  readonly bodies: string[] = [];
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
        receiver.bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(204).end();
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

interface DeliveryOut {
  id: string;
  origin: string;
  status: string;
}

/** The event's deliveries once `count` have succeeded (the worker runs beside the API), bounded. */
async function deliveredOnce(base: string, account: Account, eventId: string, count: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const page = await httpExpect<{ results: DeliveryOut[] }>(
      200,
      base,
      'GET',
      `/webhooks/deliveries?event_id=${eventId}`,
      { token: account.token },
    );
    if (page.results.filter((d) => d.status === 'success').length >= count) return page.results;
    if (Date.now() > deadline) throw new Error(`no ${count} successful deliveries of ${eventId} in time`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function openSignedIn(page: Page, account: Account, path: string): Promise<void> {
  await page.goto(path);
  await page.waitForURL((url) => url.pathname === '/login');
  await signIn(page, account.email, account.password);
  await page.waitForURL((url) => url.pathname === path);
}

describe('dashboard: the event page', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let receiver: Receiver;

  before(async () => {
    receiver = await Receiver.start();
    ({ server, browser } = await startServerAndBrowser({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL: '100ms',
    }));
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await receiver?.close();
  });

  test('feed row → event page: map, payload, the delivery and the run it caused', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'event-page');
      const token = account.token;
      const depot = await httpExpect<{ id: string }>(201, base, 'POST', '/geofences', {
        token,
        body: {
          name: 'Depot',
          geometry: { type: 'Circle', coordinates: [DEPOT.lng, DEPOT.lat], radius: 200 },
          metadata: { site: 'north' },
        },
      });
      const webhook = await httpExpect<{ id: string }>(201, base, 'POST', '/webhooks', {
        token,
        body: { name: 'Dispatch', url: receiver.url, events: ['geofence.enter'] },
      });
      const workflow = await httpExpect<{ id: string }>(201, base, 'POST', '/workflows', {
        token,
        body: {
          name: 'Arrivals',
          trigger: { geofence_id: depot.id, event_types: ['enter'] },
          actions: [{ type: 'webhook', config: { webhook_id: webhook.id } }],
        },
      });
      const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
        token,
        body: { name: 'Truck 7', user_id: 'driver-7' },
      });
      const stored = await httpExpect<{ events: Array<{ id: string }> }>(
        201,
        base,
        'POST',
        `/devices/${device.id}/locations`,
        {
          token,
          body: {
            coordinates: [DEPOT.lng + 0.0005, DEPOT.lat + 0.0003],
            timestamp: new Date(Date.now() - 60_000).toISOString(),
            metadata: { trip: 'T-1001' },
          },
        },
      );
      const eventId = stored.events[0]?.id ?? '';
      assert.ok(eventId, 'the location entered the Depot');
      const deliveries = await deliveredOnce(base, account, eventId, 2);
      const workflowDelivery = deliveries.find((d) => d.origin === 'workflow');
      const subscriptionDelivery = deliveries.find((d) => d.origin === 'subscription');
      assert.ok(workflowDelivery && subscriptionDelivery, 'one delivery of each origin');

      // The feed: a click anywhere on the row opens the event.
      await openSignedIn(page, account, '/events');
      const row = page.getByRole('row').filter({ hasText: 'Depot' });
      await row.getByRole('cell', { name: 'Depot', exact: true }).click();
      await page.waitForURL(`/events/${eventId}`);
      await page.getByRole('heading', { level: 1, name: 'enter Depot' }).waitFor();

      // Back in the feed, the keyboard opens it through the row's link.
      await page.getByRole('link', { name: '← All events' }).click();
      await page.waitForURL('/events');
      const link = page.getByRole('link', { name: /enter at Depot/ });
      await link.focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(`/events/${eventId}`);

      // The map: the base map with the geofence drawn, labelled for screen readers.
      const map = page.getByRole('application', { name: /Map of the event/ });
      await map.waitFor();
      await page.getByText('the geofence is drawn as it is now').waitFor();
      assert.ok((await page.getByTestId('event-map').locator('canvas').count()) > 0, 'shapes on the canvas');

      // The payload: what the receiver got, less the delivery's own id.
      const payload = page.getByRole('region', { name: 'Payload of this event' });
      const shown = JSON.parse((await payload.textContent()) ?? '') as Record<string, unknown>;
      assert.equal(receiver.bodies.length, 2);
      for (const body of receiver.bodies) {
        const { id, ...rest } = JSON.parse(body) as Record<string, unknown>;
        assert.ok(id);
        assert.deepEqual(shown, rest);
      }
      assert.deepEqual((shown.data as { metadata: unknown }).metadata, {
        geofence_metadata: { site: 'north' },
        event_metadata: { trip: 'T-1001' },
      });

      // The deliveries and the run.
      const deliveryTable = page.getByRole('table', { name: /Webhook deliveries of this event/ });
      const runTable = page.getByRole('table', { name: /Workflow runs of this event/ });
      await deliveryTable.getByRole('row').filter({ hasText: 'Workflow action' }).waitFor();
      // The subscription's own delivery: origin "Webhook", as the delivery portal names it.
      await deliveryTable.getByRole('cell', { name: 'Webhook', exact: true }).waitFor();
      await runTable.getByRole('link', { name: 'Arrivals' }).waitFor();
      await axe(page, 'event page');
      await screenshot(page, 'event-page');
      await screenshot(page, 'event-page-jobs', runTable);

      await deliveryTable
        .getByRole('row')
        .filter({ hasText: 'Workflow action' })
        .getByRole('link', { name: 'Dispatch' })
        .click();
      await page.waitForURL(`/webhooks/deliveries/${workflowDelivery.id}`);
      await page.getByRole('heading', { level: 1, name: 'Delivery geofence.enter' }).waitFor();

      await page.goBack();
      await page.waitForURL(`/events/${eventId}`);
      await runTable.getByRole('link', { name: 'Arrivals' }).click();
      await page.waitForURL(new RegExp(`^${base}/workflows/${workflow.id}/runs/[0-9a-f-]{36}$`));
      await page.getByRole('heading', { level: 1, name: 'Run of Arrivals' }).waitFor();
      const runId = new URL(page.url()).pathname.split('/').pop();
      const runs = await httpExpect<{ results: Array<{ id: string }> }>(
        200,
        base,
        'GET',
        `/events/${eventId}/workflow-runs`,
        { token },
      );
      assert.deepEqual(
        runs.results.map((r) => r.id),
        [runId],
      );

      // The geofence deleted since: the point alone, and the page says so.
      await httpExpect(204, base, 'DELETE', `/geofences/${depot.id}`, { token });
      watch.allowHttpError(404, `/api/v1/geofences/${depot.id}`);
      await page.goBack();
      await page.getByRole('link', { name: '← All events' }).click();
      await page.getByRole('link', { name: /enter at Depot/ }).click();
      await page.waitForURL(`/events/${eventId}`);
      await page.getByText('the geofence has been deleted since').waitFor();
      await axe(page, 'event page, geofence deleted');
      await screenshot(page, 'event-page-geofence-deleted');
    }));
});
