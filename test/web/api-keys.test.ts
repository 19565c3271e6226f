/**
 * The API keys page in a real browser: a key created with scopes chosen by checkbox is shown once
 * with a copy button that puts it on the clipboard, works against the API with exactly those
 * scopes, is listed afterwards by prefix and last use only, and stops working when revoked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { httpCall, httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type DashboardServer, registerAccount } from './dashboard-server.ts';

interface TestApiKey {
  valid: boolean;
  api_key: { id: string; name: string; prefix: string; scopes: string[] };
  workspace_id: string;
}

interface ApiKeyRow {
  name: string;
  prefix: string;
  last_used_at: string | null;
}

describe('dashboard: API keys', () => {
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

  test('create with scopes → shown once → copied → works with those scopes → listed without the key → revoked', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'keys');
      await page.goto('/api-keys');
      await page.waitForURL('/login?next=%2Fapi-keys');
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      await page.getByText('No keys yet.').waitFor();
      await axe(page);
      await screenshot(page, 'api-keys-empty');

      await page.getByLabel('Name').fill('Fleet tracker');
      const scopes = page.getByRole('group', { name: 'Scopes' });
      await scopes.getByRole('group', { name: 'Devices' }).getByRole('checkbox', { name: 'read' }).check();
      await scopes.getByRole('group', { name: 'Locations' }).getByRole('checkbox', { name: 'write' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();

      const shown = page.getByTestId('new-api-key');
      await shown.waitFor();
      const key = (await shown.textContent()) ?? '';
      assert.match(key, /^gf_live_\S{32,}$/);
      await page.getByRole('heading', { name: 'Key “Fleet tracker” created' }).waitFor();
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByRole('status').filter({ hasText: 'The key is on your clipboard.' }).waitFor();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), key);
      await page.getByRole('button', { name: 'Copied' }).waitFor();
      await axe(page);
      await screenshot(page, 'api-keys-created');

      // The key works, with the chosen scopes and no others.
      const tested = await httpExpect<TestApiKey>(200, base, 'GET', '/auth/test-api-key', { apiKey: key });
      assert.equal(tested.valid, true);
      assert.equal(tested.workspace_id, account.workspaceId);
      assert.deepEqual([...tested.api_key.scopes].sort(), ['devices:read', 'locations:write']);
      assert.equal((await httpCall(base, 'GET', '/devices', { apiKey: key })).status, 200);
      assert.equal((await httpCall(base, 'GET', '/geofences', { apiKey: key })).status, 403);
      // Its use is recorded off the request path; wait for it before looking at the list.
      const deadline = Date.now() + 10_000;
      for (;;) {
        const rows = await httpExpect<{ results: ApiKeyRow[] }>(200, base, 'GET', '/account/api-keys', {
          token: account.token,
        });
        if (rows.results[0]?.last_used_at) break;
        assert.ok(Date.now() < deadline, 'last_used_at was never recorded');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }

      // After a reload (still signed in, through the session cookie) the key is not shown again.
      await page.reload();
      const row = page.getByRole('row').filter({ hasText: 'Fleet tracker' });
      await row.waitFor();
      assert.equal(await page.getByTestId('new-api-key').count(), 0);
      assert.ok(!(await page.content()).includes(key), 'the key appears nowhere on the page');
      const cells = await row.getByRole('cell').allTextContents();
      assert.equal(cells[1], `${tested.api_key.prefix}…`, 'the prefix identifies the key');
      assert.ok(key.startsWith(tested.api_key.prefix));
      assert.equal(cells[2], 'devices:read, locations:write');
      assert.notEqual(cells[4], 'Never', 'the last use is shown');
      assert.match(cells[4] ?? '', /\d{4}/);
      await axe(page);
      await screenshot(page, 'api-keys-list', row);

      page.once('dialog', (dialog) => {
        assert.match(dialog.message(), /Revoke "Fleet tracker"\?/);
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Revoke Fleet tracker' }).click();
      await page.getByText('No keys yet.').waitFor();
      assert.equal((await httpCall(base, 'GET', '/auth/test-api-key', { apiKey: key })).status, 401);
    }));

  test('creating without a scope is refused on the page, before any request', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'noscope');
      await page.goto('/login?next=%2Fapi-keys');
      await signIn(page, account.email, account.password);
      await page.getByText('No keys yet.').waitFor();
      const posts: string[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST') posts.push(request.url());
      });
      await page.getByLabel('Name').fill('Nothing');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('alert').filter({ hasText: 'Choose at least one scope.' }).waitFor();
      assert.deepEqual(posts, []);
      await axe(page);
    }));
});
