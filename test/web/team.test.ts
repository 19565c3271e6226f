/**
 * Team, settings, account and notifications in a real browser against the real server, with the
 * invitation e-mails read from an SMTP sink: the owner invites someone without an account from the
 * Team page; the invitee signs up from the e-mail's link in a second browser, lands in the
 * workspace, and as a `member` is refused the settings and the invite form. Resend (a second
 * e-mail; the first link stops working) and revoke. The header's unread count, with notifications
 * made the real way (creating API keys), drops after "Mark all read". Every page is checked with
 * axe and photographed at laptop and phone size.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type SinkMessage, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { httpCall, httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import {
  type Account,
  type DashboardServer,
  PASSWORD,
  registerAccount,
  uniqueEmail,
} from './dashboard-server.ts';

const ACCEPT = '/api/v1/workspaces/invitations/accept';

/** The path and query of the accept link in an invitation e-mail. */
function acceptLink(mail: SinkMessage): string {
  const match = /https?:\/\/\S+\/accept-invitation\?token=\S+/.exec(mail.text);
  assert.ok(match, `no invitation link in the e-mail:\n${mail.text}`);
  const url = new URL(match[0]);
  return url.pathname + url.search;
}

/** Follows a link inside the app as its own links do, without reloading the page. */
async function followLink(page: Page, target: string): Promise<void> {
  await page.evaluate(
    `history.pushState(null, '', ${JSON.stringify(target)}); dispatchEvent(new PopStateEvent('popstate'))`,
  );
}

async function heading(page: Page, name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

async function nav(page: Page, name: string, title = name): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
  await heading(page, title);
}

async function signedIn(page: Page, account: { email: string }): Promise<void> {
  await page.goto('/login');
  await signIn(page, account.email, PASSWORD);
  await heading(page, 'Geofences');
}

/** Invites `email` through the Team page's form and waits for the confirmation. */
async function inviteOnPage(page: Page, email: string, role = 'member'): Promise<void> {
  const form = page.getByRole('region', { name: 'Invite someone' });
  await form.getByLabel('E-mail').fill(email);
  await form.getByLabel('Role').selectOption(role);
  await form.getByRole('button', { name: 'Send invitation' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: `Invitation sent to ${email}` })
    .waitFor();
}

function pendingRow(page: Page, email: string) {
  return page
    .getByRole('table', { name: 'Invitations not yet accepted' })
    .getByRole('row')
    .filter({ has: page.getByRole('rowheader', { name: email, exact: true }) });
}

describe('dashboard: team, settings, account and notifications', () => {
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

  const invitationTo = (email: string, except: readonly SinkMessage[] = []) =>
    sink.waitFor((m) => m.to.includes(email) && /invited/i.test(m.subject) && !except.includes(m), 10_000);

  /** Registers `email` through the API and accepts `token` as that user: the API's answer. */
  async function acceptThroughApi(email: string, token: string | undefined) {
    await httpExpect(201, base, 'POST', '/auth/register', { body: { email, password: PASSWORD } });
    const pair = await httpExpect<{ access_token: string }>(200, base, 'POST', '/auth/login', {
      body: { email, password: PASSWORD },
    });
    return httpCall<{ detail: string; error_code: string }>(base, 'POST', '/workspaces/invitations/accept', {
      token: pair.access_token,
      body: { token },
    });
  }

  test('an invitation from the Team page: the invitee signs up from the e-mail, joins as a member, is refused settings and the invite form', () =>
    inPage(browser, base, async (page, watch) => {
      // Demoting the last owner is refused (400), on purpose below.
      watch.allowHttpError(400, /^\/api\/v1\/workspaces\/[^/]+\/members\/[^/]+$/);
      const owner = await registerAccount(base, 'team-owner');
      await httpExpect(201, base, 'POST', '/geofences', {
        token: owner.token,
        body: { name: 'Depot', geometry: { type: 'Circle', coordinates: [13.4, 52.5], radius: 300 } },
      });
      await signedIn(page, owner);
      await nav(page, 'Team');
      await page.getByRole('table', { name: /^Members of / }).waitFor();
      await axe(page, 'team (owner)');
      await screenshot(page, 'team-owner');

      const invitee = uniqueEmail('teammate');
      await inviteOnPage(page, invitee);
      await pendingRow(page, invitee).waitFor();
      const mail = await invitationTo(invitee);
      assert.match(mail.subject, /team-owner workspace/);

      await inPage(browser, base, async (second) => {
        await second.goto(acceptLink(mail));
        await heading(second, 'Join a workspace');
        await second.getByRole('link', { name: 'create an account' }).click();
        await heading(second, 'Create your account');
        await second.getByLabel('Your name').fill('Tess Mate');
        await second.getByLabel('E-mail').fill(invitee);
        await second.getByLabel('Password').fill(PASSWORD);
        await second.getByRole('button', { name: 'Create account' }).click();
        await second.getByRole('button', { name: 'Accept invitation' }).click();

        // Lands in the workspace it joined: the switcher shows it, its geofence is listed.
        await second.waitForURL('/geofences');
        await heading(second, 'Geofences');
        const switcher = second.getByRole('combobox', { name: 'Workspace' });
        assert.equal(await switcher.locator('option:checked').textContent(), 'team-owner workspace');
        await second.getByText('Depot', { exact: true }).first().waitFor();

        await nav(second, 'Team');
        await second.getByText(/this list is read-only/).waitFor();
        await second.getByRole('rowheader', { name: /Tess Mate/ }).waitFor();
        assert.equal(
          await second.getByRole('button', { name: 'Send invitation' }).count(),
          0,
          'no invite form',
        );
        assert.equal(await second.getByRole('button', { name: /^Remove/ }).count(), 0, 'no removal');
        assert.equal(await second.getByRole('combobox', { name: /^Role of/ }).count(), 0, 'no role change');
        await axe(second, 'team (member)');
        await screenshot(second, 'team-member');

        await nav(second, 'Settings', 'Workspace settings');
        const refusal = second.getByRole('status').filter({ hasText: 'Only' });
        await refusal.waitFor();
        assert.match(
          (await refusal.textContent()) ?? '',
          /Only the workspace's owners and admins can change the workspace settings\.\s*You are a member of team-owner workspace/,
        );
        assert.equal(await second.getByLabel('Workspace name').count(), 0, 'no settings form');
        await axe(second, 'settings (member)');
        await screenshot(second, 'settings-member');
      });

      // Back with the owner: the invitee is a member now, nothing is pending.
      await nav(page, 'Settings', 'Workspace settings');
      await nav(page, 'Team');
      await page.getByRole('rowheader', { name: /Tess Mate/ }).waitFor();
      await page.getByText('No invitations are waiting for an answer.').waitFor();

      // The last owner cannot demote itself: the API's words are shown, the role stays.
      const ownerRole = page.getByRole('combobox', { name: `Role of ${owner.email}` });
      await ownerRole.selectOption('member');
      await page.getByRole('button', { name: `Change role of ${owner.email}` }).click();
      await page.getByRole('alert').filter({ hasText: 'The last owner cannot be demoted' }).waitFor();
      await ownerRole.locator('option:checked', { hasText: /^owner$/ }).waitFor({ state: 'attached' });

      // Promote the invitee to admin, then remove them (with confirmation).
      const memberRow = page
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: /Tess Mate/ }) });
      await page.getByRole('combobox', { name: `Role of ${invitee}` }).selectOption('admin');
      await page.getByRole('button', { name: `Change role of ${invitee}` }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `${invitee} is now an admin.` })
        .waitFor();
      await memberRow.getByRole('button', { name: `Remove ${invitee}` }).click();
      await memberRow
        .getByRole('group', { name: `Remove ${invitee}?` })
        .getByRole('button', { name: 'Remove' })
        .click();
      await page
        .getByRole('status')
        .filter({ hasText: `${invitee} was removed` })
        .waitFor();
      await memberRow.waitFor({ state: 'detached' });
    }));

  test('resend mails a new link and the first stops working; revoke makes the link fail', () =>
    inPage(browser, base, async (page, watch) => {
      const owner = await registerAccount(base, 'resend-owner');
      await signedIn(page, owner);
      await nav(page, 'Team');

      const invitee = uniqueEmail('resent');
      await inviteOnPage(page, invitee);
      const first = await invitationTo(invitee);
      const row = pendingRow(page, invitee);
      await row.getByRole('button', { name: `Resend to ${invitee}` }).click();
      await row.getByRole('group', { name: `Send ${invitee} a new link?` }).waitFor();
      await axe(page, 'team (resend question)');
      await screenshot(page, 'team-invitations', row);
      await row.getByRole('button', { name: 'Resend', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'the earlier link no longer works' }).waitFor();
      const second = await invitationTo(invitee, [first]);
      assert.notEqual(second.token, first.token, 'a new token');

      await inPage(browser, base, async (other, otherWatch) => {
        otherWatch.allowHttpError(400, ACCEPT);
        await httpExpect(201, base, 'POST', '/auth/register', {
          body: { email: invitee, password: PASSWORD },
        });
        await other.goto(acceptLink(first));
        await other.getByRole('link', { name: 'Sign in' }).click();
        await signIn(other, invitee, PASSWORD);
        await other.getByRole('button', { name: 'Accept invitation' }).click();
        await other
          .getByRole('alert')
          .filter({ hasText: 'Invitation token is invalid, used or expired' })
          .waitFor();
        await followLink(other, acceptLink(second));
        await other.getByRole('button', { name: 'Accept invitation' }).click();
        await other.waitForURL('/geofences');
        const switcher = other.getByRole('combobox', { name: 'Workspace' });
        assert.equal(await switcher.locator('option:checked').textContent(), 'resend-owner workspace');
      });

      const revoked = uniqueEmail('revoked');
      await inviteOnPage(page, revoked);
      const revokedMail = await invitationTo(revoked);
      const revokedRow = pendingRow(page, revoked);
      await revokedRow.getByRole('button', { name: `Revoke the invitation of ${revoked}` }).click();
      await revokedRow.getByRole('button', { name: 'Revoke', exact: true }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `The invitation of ${revoked} was revoked` })
        .waitFor();
      await page.getByText('No invitations are waiting for an answer.').waitFor();
      const refused = await acceptThroughApi(revoked, revokedMail.token);
      assert.equal(refused.status, 400);
      assert.equal(refused.body.error_code, 'INVALID_TOKEN');
      assert.deepEqual(watch.problems(), []);
    }));

  test('the bell counts unread notifications; mark one read, then all; settings and account pages', () =>
    inPage(browser, base, async (page) => {
      const owner: Account = await registerAccount(base, 'bell-owner');
      // Creating an API key notifies the workspace's owners and admins (contract §2.5).
      for (const name of ['Tracker one', 'Tracker two', 'Tracker three']) {
        await httpExpect(201, base, 'POST', '/account/api-keys', {
          token: owner.token,
          body: { name, scopes: ['devices:read'] },
        });
      }
      await signedIn(page, owner);
      const bell = page.getByRole('banner').getByRole('link', { name: /^Notifications/ });
      await page.getByRole('link', { name: 'Notifications 3 unread' }).waitFor();
      await bell.click();
      await heading(page, 'Notifications');
      await page.getByRole('list', { name: 'Notifications' }).getByRole('listitem').nth(2).waitFor();
      await axe(page, 'notifications');
      await screenshot(page, 'notifications');

      await page.getByRole('radio', { name: 'Unread only' }).check();
      await page.waitForURL((url) => url.searchParams.get('unread') === 'true');
      const unread = page.getByRole('list', { name: 'Unread notifications' });
      await unread.waitFor();
      await unread
        .getByRole('button', { name: /^Mark read/ })
        .first()
        .click();
      await page.getByRole('link', { name: 'Notifications 2 unread' }).waitFor();
      await unread.getByRole('listitem').nth(2).waitFor({ state: 'detached' });
      assert.equal(await unread.getByRole('listitem').count(), 2);

      await page.getByRole('button', { name: 'Mark all read' }).click();
      await page.getByRole('status').filter({ hasText: '2 notifications marked read.' }).waitFor();
      await page.getByText('Nothing unread.').waitFor();
      await page.getByRole('link', { name: 'Notifications', exact: true }).waitFor();

      // Workspace settings as the owner: rename; the switcher follows.
      await nav(page, 'Settings', 'Workspace settings');
      await page.getByLabel('Workspace name').fill('Bell & Co');
      await page.getByLabel('Access token lifetime (seconds)').fill('7200');
      await page.getByText('2 hours.', { exact: false }).waitFor();
      await axe(page, 'settings (owner)');
      await screenshot(page, 'settings-owner');
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
      await page
        .getByRole('combobox', { name: 'Workspace' })
        .locator('option:checked', { hasText: 'Bell & Co' })
        .waitFor({ state: 'attached' });
      const stored = await httpExpect<{ name: string; settings: { access_token_ttl_seconds: number } }>(
        200,
        base,
        'GET',
        `/workspaces/${owner.workspaceId}`,
        { token: owner.token },
      );
      assert.deepEqual([stored.name, stored.settings.access_token_ttl_seconds], ['Bell & Co', 7200]);

      // Account: preferences saved through the page.
      await page.getByRole('banner').getByRole('link', { name: 'bell-owner user' }).click();
      await heading(page, 'Account');
      await page.getByLabel('Time zone').selectOption('America/New_York');
      await page.getByLabel('Send me notifications by e-mail too').check();
      await page.getByLabel('An API key was created or revoked').uncheck();
      await axe(page, 'account');
      await screenshot(page, 'account');
      await page.getByRole('button', { name: 'Save preferences' }).click();
      await page.getByRole('status').filter({ hasText: 'Preferences saved.' }).waitFor();
      const settings = await httpExpect<{
        timezone: string;
        email_notifications: boolean;
        notify_on: string[];
      }>(200, base, 'GET', '/account/settings', { token: owner.token });
      assert.equal(settings.timezone, 'America/New_York');
      assert.equal(settings.email_notifications, true);
      assert.ok(!settings.notify_on.includes('api_key'), `notify_on ${settings.notify_on.join(',')}`);
    }));
});
