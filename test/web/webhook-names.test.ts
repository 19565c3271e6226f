/**
 * The deliveries list names every webhook, however many the workspace has: a workspace on a plan
 * without a webhook limit holds 205 webhooks, more than one page of the webhooks list (200); a
 * delivery of one beyond the first page shows that webhook's name, and the webhook filter offers it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { httpExpect } from '../helpers/spawned-server.ts';
import { inPage, signIn, startServerAndBrowser } from './browser.ts';
import { type DashboardServer, registerAccount } from './dashboard-server.ts';

const WEBHOOKS = 205;

describe('dashboard: webhook names beyond the first page', () => {
  let server: DashboardServer;
  let browser: Browser;

  before(async () => {
    // Enterprise has no webhook limit (contract §7); deliveries to a closed port fail and stay listed.
    ({ server, browser } = await startServerAndBrowser({
      DEFAULT_PLAN: 'enterprise',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    }));
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('a delivery of the 205th webhook shows its name, and the filter offers it', () =>
    inPage(browser, server.base, async (page) => {
      const base = server.base;
      const account = await registerAccount(base, 'many-webhooks');
      const auth = { token: account.token };
      const ids: string[] = [];
      for (let start = 0; start < WEBHOOKS; start += 8) {
        const batch = Array.from({ length: Math.min(8, WEBHOOKS - start) }, (_, k) => start + k);
        const created = await Promise.all(
          batch.map((n) =>
            httpExpect<{ id: string }>(201, base, 'POST', '/webhooks', {
              ...auth,
              body: { name: `Receiver ${String(n).padStart(3, '0')}`, url: `http://127.0.0.1:9/hooks/${n}` },
            }),
          ),
        );
        ids.push(...created.map((w) => w.id));
      }
      const firstPage = await httpExpect<{ results: Array<{ id: string }> }>(
        200,
        base,
        'GET',
        '/webhooks?limit=200',
        auth,
      );
      const onFirstPage = new Set(firstPage.results.map((w) => w.id));
      const index = ids.findIndex((id) => !onFirstPage.has(id));
      assert.ok(index >= 0, 'a webhook beyond the first page');
      const name = `Receiver ${String(index).padStart(3, '0')}`;
      await httpExpect(202, base, 'POST', `/webhooks/${ids[index]}/test`, auth);

      await page.goto('/webhooks/deliveries');
      await page.waitForURL((url) => url.pathname === '/login');
      await signIn(page, account.email, account.password);
      const deliveries = page.getByRole('table', { name: 'Deliveries, newest first' });
      await deliveries.getByRole('cell', { name, exact: true }).waitFor();
      const filter = page.getByLabel('Webhook', { exact: true });
      await filter.selectOption({ label: name });
      assert.equal(await filter.inputValue(), ids[index]);
      assert.equal(await filter.locator('option').count(), WEBHOOKS + 1, 'every webhook and "All"');
    }));
});
