/**
 * The signed-out pages in a real browser against the real server: registration, sign-out and
 * sign-in, a wrong password, password reset and e-mail verification through the e-mails the server
 * sends (read from an SMTP sink), and an invitation link. Every page is checked with axe and
 * photographed at laptop and phone size. The signed-in session: session.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { httpCall, httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type DashboardServer, PASSWORD, registerAccount, uniqueEmail } from './dashboard-server.ts';

/** The address of the first link to `path` in an e-mail's text. */
function linkTo(text: string, path: string): URL {
  const match = new RegExp(`https?://\\S+${path}\\?token=\\S+`).exec(text);
  assert.ok(match, `no ${path} link in the e-mail:\n${text}`);
  return new URL(match[0]);
}

async function heading(page: Page, name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

describe('dashboard: sign-in pages', () => {
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

  test('registering through the page lands in the dashboard; sign out, then sign in again', () =>
    inPage(browser, base, async (page) => {
      await page.goto('/register');
      await heading(page, 'Create your account');
      await axe(page);
      await screenshot(page, 'register');

      const email = uniqueEmail('register');
      await page.getByLabel('Your name').fill('Ada Lovelace');
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByLabel('Workspace name').fill('Analytical Engines');
      await page.getByRole('button', { name: 'Create account' }).click();

      await page.waitForURL('/geofences');
      await heading(page, 'Geofences');
      const switcher = page.getByRole('combobox', { name: 'Workspace' });
      assert.equal(await switcher.locator('option:checked').textContent(), 'Analytical Engines');
      await page.getByText('Ada Lovelace').waitFor();
      await axe(page);
      await screenshot(page, 'signed-in');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL('/login');
      await heading(page, 'Sign in');
      await axe(page);
      await screenshot(page, 'login');
      // Signed out: a dashboard page sends the visitor to sign in first, and back after it.
      await page.goto('/api-keys');
      await page.waitForURL('/login?next=%2Fapi-keys');

      await signIn(page, email, PASSWORD);
      assert.equal(new URL(page.url()).pathname, '/api-keys');
      await heading(page, 'API keys');
    }));

  test('a wrong password shows the API’s message and stays on the sign-in page', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'wrong');
      watch.allowHttpError(401, '/api/v1/auth/login');
      await page.goto('/login');
      await page.getByLabel('E-mail').fill(account.email);
      await page.getByLabel('Password').fill('not the password');
      const answer = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/login'));
      await page.getByRole('button', { name: 'Sign in' }).click();
      const body = (await (await answer).json()) as { detail: string };
      assert.equal(body.detail, 'Invalid email or password');
      await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/login');
      await axe(page);
      await screenshot(page, 'login-error');
    }));

  test('password reset: request on the page, follow the e-mail’s link, set a new password, sign in with it', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'reset');
      await page.goto('/login');
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await heading(page, 'Reset your password');
      await axe(page);
      await screenshot(page, 'forgot-password');

      await page.getByLabel('E-mail').fill(account.email);
      await page.getByRole('button', { name: 'Send reset link' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: 'an e-mail with a reset link is on its way' })
        .waitFor();
      await axe(page);
      await screenshot(page, 'forgot-password-sent');

      const mail = await sink.waitFor(
        (m) => m.to.includes(account.email) && m.subject === 'Reset your password',
        10_000,
      );
      const link = linkTo(mail.text, '/reset-password');
      assert.equal(link.origin, base, 'the link points at this server (PUBLIC_URL)');
      await page.goto(link.pathname + link.search);
      await heading(page, 'Choose a new password');
      await axe(page);
      await screenshot(page, 'reset-password');

      const newPassword = 'a brand new passphrase';
      await page.getByLabel('New password').fill(newPassword);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('status').filter({ hasText: 'Your password is changed' }).waitFor();
      await screenshot(page, 'reset-password-done');
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.waitForURL('/login');
      await signIn(page, account.email, newPassword);
      await heading(page, 'Geofences');

      const old = await httpCall(base, 'POST', '/auth/login', {
        body: { email: account.email, password: account.password },
      });
      assert.equal(old.status, 401, 'the old password no longer works');
      // The reset ended the sessions that existed before it.
      assert.equal((await httpCall(base, 'GET', '/auth/me', { token: account.token })).status, 401);

      // The link is single-use: a second visit shows the API's message.
      watch.allowHttpError(400, '/api/v1/auth/password-reset/confirm');
      await page.goto(link.pathname + link.search);
      await page.getByLabel('New password').fill('yet another passphrase');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('alert').waitFor();
      assert.match((await page.getByRole('alert').textContent()) ?? '', /token/i);
    }));

  test('the verification e-mail’s link verifies the address on arrival; a used link says so', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'verify');
      const mail = await sink.waitFor(
        (m) => m.to.includes(account.email) && m.subject === 'Verify your e-mail address',
        10_000,
      );
      const link = linkTo(mail.text, '/verify-email');
      assert.equal(link.origin, base);
      const me = () =>
        httpExpect<{ email_verified: boolean }>(200, base, 'GET', '/auth/me', { token: account.token });
      assert.equal((await me()).email_verified, false);

      await page.goto(link.pathname + link.search);
      await heading(page, 'E-mail verification');
      await page.getByRole('status').filter({ hasText: 'Your e-mail address is verified.' }).waitFor();
      await axe(page);
      await screenshot(page, 'verify-email');
      assert.equal((await me()).email_verified, true);

      watch.allowHttpError(400, '/api/v1/auth/verify-email');
      await page.reload();
      await page.getByRole('alert').waitFor();
      assert.match((await page.getByRole('alert').textContent()) ?? '', /token/i);
      await axe(page);
      await screenshot(page, 'verify-email-used');
    }));

  test('an invitation link: create an account from it, accept, and the workspace is in the switcher', () =>
    inPage(browser, base, async (page) => {
      const owner = await registerAccount(base, 'inviter');
      const invitee = uniqueEmail('invitee');
      await httpExpect(202, base, 'POST', `/workspaces/${owner.workspaceId}/members`, {
        token: owner.token,
        body: { email: invitee, role: 'member' },
      });
      const mail = await sink.waitFor((m) => m.to.includes(invitee), 10_000);
      const link = linkTo(mail.text, '/accept-invitation');

      await page.goto(link.pathname + link.search);
      await heading(page, 'Join a workspace');
      await axe(page);
      await screenshot(page, 'accept-invitation');
      await page.getByRole('link', { name: 'create an account' }).click();
      await heading(page, 'Create your account');
      await page.getByLabel('E-mail').fill(invitee);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();

      await page.waitForURL((url) => url.pathname === '/accept-invitation');
      await page.getByRole('button', { name: 'Accept invitation' }).waitFor();
      await axe(page);
      await screenshot(page, 'accept-invitation-signed-in');
      await page.getByRole('button', { name: 'Accept invitation' }).click();
      await page.waitForURL('/geofences');
      const options = await page
        .getByRole('combobox', { name: 'Workspace' })
        .locator('option')
        .allTextContents();
      assert.ok(options.includes('inviter workspace'), `switcher lists ${options.join(', ')}`);
    }));
});
