/**
 * The API keys page as a workspace member. Owners and admins manage API keys (contract §2.1) and
 * the API refuses members every key operation, listing included: a member is told who can and
 * where to find them, with no create form, no list stuck on "Loading…" and no refused request in
 * the console (the harness fails the test on any 403). The owner's keys stay the owner's: the
 * page shows the member nothing of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, painted, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type DashboardServer, PASSWORD, registerAccount, uniqueEmail } from './dashboard-server.ts';

describe('dashboard: API keys as a member', () => {
  let sink: SmtpSink;
  let server: DashboardServer;
  let browser: Browser;
  let base: string;

  before(async () => {
    sink = await startSmtpSink();
    ({ server, browser } = await startServerAndBrowser({ SMTP_URL: sink.url }));
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await sink?.close();
  });

  test('a member is told who manages the keys: no form, no list, nothing refused', () =>
    inPage(browser, base, async (page) => {
      const owner = await registerAccount(base, 'keys-owner');
      await httpExpect(201, base, 'POST', '/account/api-keys', {
        token: owner.token,
        body: { name: 'Owner tracker', scopes: ['locations:write'] },
      });
      const email = uniqueEmail('keys-member');
      await httpExpect(202, base, 'POST', `/workspaces/${owner.workspaceId}/members`, {
        token: owner.token,
        body: { email, role: 'member' },
      });
      const mail = await sink.waitFor((m) => m.to.includes(email) && m.token !== undefined, 10_000);
      await httpExpect(201, base, 'POST', '/auth/register', { body: { email, password: PASSWORD } });
      const member = await httpExpect<{ access_token: string }>(200, base, 'POST', '/auth/login', {
        body: { email, password: PASSWORD },
      });
      await httpExpect(200, base, 'POST', '/workspaces/invitations/accept', {
        token: member.access_token,
        body: { token: mail.token },
      });

      await page.goto('/login');
      // The member's own workspace comes first at sign-in; the owner's is chosen in the switcher.
      await signIn(page, email, PASSWORD);
      await page.getByRole('heading', { level: 1, name: 'Geofences' }).waitFor();
      const switcher = page.getByRole('combobox', { name: 'Workspace' });
      await switcher.selectOption({ label: 'keys-owner workspace' });
      await switcher
        .locator('option:checked', { hasText: 'keys-owner workspace' })
        .waitFor({ state: 'attached' });
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      const refusal = page.getByRole('status').filter({ hasText: 'Only' });
      await refusal.waitFor();
      assert.match(
        (await refusal.textContent()) ?? '',
        /Only the workspace's owners and admins can create, list or revoke the workspace's API keys\.\s*You are a member of keys-owner workspace/,
      );
      await refusal.getByRole('link', { name: 'Team page' }).waitFor();
      await painted(page);
      assert.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0, 'no create form');
      assert.equal(await page.getByText(/^\s*Loading\b/).count(), 0, 'nothing left loading');
      assert.equal(await page.getByText('Owner tracker').count(), 0, 'no key of the owner');
      await axe(page, 'API keys (member)');
      await screenshot(page, 'api-keys-member');
    }));
});
