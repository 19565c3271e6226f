/**
 * A dead-letter notification on the dashboard links to the page that retries it, rather than
 * telling the reader to `POST /api/v1/webhooks/dlq/{id}/retry`: the link opens the Dead letters
 * page filtered to the webhook, where the entry is listed.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';

describe('dashboard: notifications link to where they are acted on', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let account: Account;
  let receiver: http.Server;
  let webhookId: string;

  before(async () => {
    receiver = http.createServer((_req, res) => res.writeHead(500).end('down'));
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    ({ server, browser } = await startServerAndBrowser({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '50ms',
      WEBHOOK_POLL_INTERVAL: '100ms',
    }));
    base = server.base;
    account = await registerAccount(base, 'notify-links');
    const token = account.token;
    const webhook = await httpExpect<{ id: string }>(201, base, 'POST', '/webhooks', {
      token,
      body: { name: 'Dispatch', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` },
    });
    webhookId = webhook.id;
    await httpExpect(201, base, 'POST', '/geofences', {
      token,
      body: { name: 'Depot', geometry: { type: 'Circle', coordinates: [13.405, 52.52], radius: 150 } },
    });
    const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
      token,
      body: { name: 'Van 1' },
    });
    await httpExpect(201, base, 'POST', `/devices/${device.id}/locations`, {
      token,
      body: { coordinates: [13.405, 52.52] },
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      const inbox = await httpExpect<{ results: Array<{ type: string }> }>(
        200,
        base,
        'GET',
        '/account/notifications',
        { token },
      );
      if (inbox.results.some((n) => n.type === 'webhook.dead_letter')) break;
      assert.ok(Date.now() < deadline, `no dead-letter notification; the server said:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    receiver?.closeAllConnections();
    receiver?.close();
  });

  test('a dead letter: a link to the Dead letters page of its webhook, no API call to make', () =>
    inPage(browser, base, async (page) => {
      await page.goto('/login?next=%2Fnotifications');
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor();
      const item = page.getByRole('article').filter({ hasText: 'moved to the dead-letter queue' });
      await item.waitFor();
      const text = (await item.textContent()) ?? '';
      assert.doesNotMatch(text, /POST \/api/, 'no API call in the text');
      const link = item.getByRole('link', { name: 'Review and retry the dead letters of “Dispatch”' });
      assert.equal(await link.getAttribute('href'), `/webhooks/dead-letters?webhook=${webhookId}`);
      await axe(page, 'notifications with a dead letter');
      await link.click();
      await page.getByRole('heading', { level: 1, name: 'Dead letters' }).waitFor();
      await page
        .getByRole('table', { name: 'Dead-letter entries, newest first' })
        .locator('tbody tr')
        .first()
        .waitFor();
    }));
});
