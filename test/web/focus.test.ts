/**
 * Keyboard focus never falls back to `<body>` when the page changes under it: after a move to
 * another page it is on that page's h1; when a form opens, in its first field; after saving or
 * removing, on the message that says what happened (or on the thing that was made). A keyboard or
 * screen-reader user otherwise starts over from the top of the document after every action.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { axe, inPage, painted, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount, uniqueEmail } from './dashboard-server.ts';

interface Focused {
  tag: string;
  text: string;
  role: string | null;
  /** The text of the action card (fieldset legend) or section the element is in. */
  within: string;
}

/** What has focus now, after the page has painted what it had to show. */
async function focused(page: Page): Promise<Focused> {
  await painted(page);
  return page.evaluate<Focused>(`(() => {
    const el = document.activeElement;
    const card = el && el.closest('fieldset');
    return {
      tag: el ? el.tagName.toLowerCase() : 'none',
      text: el ? (el.textContent || '').trim() : '',
      role: el ? el.getAttribute('role') : null,
      within: card ? (card.querySelector('legend')?.textContent || '').trim() : '',
    };
  })()`);
}

/** Waits (bounded) until focus is somewhere other than `<body>`, then returns where. */
async function focusSettled(page: Page, what: string): Promise<Focused> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const now = await focused(page);
    if (now.tag !== 'body' && now.tag !== 'none') return now;
    assert.ok(Date.now() < deadline, `focus is on <body> ${what}`);
  }
}

async function nav(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  const now = await focusSettled(page, `after moving to ${heading}`);
  assert.deepEqual([now.tag, now.text], ['h1', heading], `after moving to ${heading}, focus is on its h1`);
}

describe('dashboard: focus after page changes, opened forms and saves', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let account: Account;

  before(async () => {
    ({ server, browser } = await startServerAndBrowser());
    base = server.base;
    account = await registerAccount(base, 'focus');
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('a new page: focus on its h1', () =>
    inPage(browser, base, async (page) => {
      await page.goto('/login');
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'Geofences' }).waitFor();
      const landed = await focusSettled(page, 'after signing in');
      assert.deepEqual([landed.tag, landed.text], ['h1', 'Geofences']);
      await nav(page, 'Team', 'Team');
      await nav(page, 'API keys', 'API keys');
      await nav(page, 'Plan & usage', 'Plan and usage');
      await nav(page, 'Workflows', 'Workflows');
      await nav(page, 'Geofences', 'Geofences');
      // Back in history is a page change too.
      await page.goBack();
      await page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
      const back = await focusSettled(page, 'after going back');
      assert.deepEqual([back.tag, back.text], ['h1', 'Workflows']);
    }));

  test('API keys: the new key after creating, the list after Done, the message after revoking', () =>
    inPage(browser, base, async (page) => {
      await page.goto('/login?next=%2Fapi-keys');
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      await page.getByLabel('Name').fill('Focus key');
      await page.getByRole('group', { name: 'Devices' }).getByRole('checkbox', { name: 'read' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('heading', { name: 'Key “Focus key” created' }).waitFor();
      const created = await focusSettled(page, 'after creating a key');
      assert.deepEqual([created.tag, created.text], ['h2', 'Key “Focus key” created']);

      await page.getByRole('button', { name: 'Done' }).click();
      const done = await focusSettled(page, 'after Done');
      assert.deepEqual([done.tag, done.text], ['h2', 'Keys']);

      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Revoke Focus key' }).click();
      await page.getByText('No keys yet.').waitFor();
      const revoked = await focusSettled(page, 'after revoking');
      assert.equal(revoked.role, 'status');
      assert.match(revoked.text, /“Focus key” was revoked/);
    }));

  test('workflows: the first field of an added action; "Add action" after removing one', () =>
    inPage(browser, base, async (page) => {
      await page.goto('/login?next=%2Fworkflows');
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
      await page.getByRole('link', { name: 'New workflow' }).click();
      await page.getByRole('heading', { level: 1, name: 'New workflow' }).waitFor();
      const opened = await focusSettled(page, 'on the new workflow page');
      assert.deepEqual([opened.tag, opened.text], ['h1', 'New workflow']);

      await page.getByLabel('New action type').selectOption({ label: 'Slack message' });
      await page.getByRole('button', { name: 'Add action' }).click();
      await page.getByRole('group', { name: /^Action 1: / }).waitFor();
      const field = await focusSettled(page, 'after adding an action');
      assert.ok(['input', 'select', 'textarea'].includes(field.tag), `a field has focus, not ${field.tag}`);
      assert.match(field.within, /^Action 1: /, 'in the new action');

      await page.getByRole('button', { name: 'Remove action 1' }).click();
      await page.getByRole('group', { name: /^Action 1: / }).waitFor({ state: 'detached' });
      const removed = await focusSettled(page, 'after removing the action');
      assert.deepEqual([removed.tag, removed.text], ['button', 'Add action']);
    }));

  test('team without mail: the confirmation takes the focus, and the invitation’s link is there to copy', () =>
    inPage(browser, base, async (page) => {
      await page.goto('/login?next=%2Fteam');
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
      const email = uniqueEmail('focus-invitee');
      const form = page.getByRole('region', { name: 'Invite someone' });
      await form.getByLabel('E-mail').fill(email);
      await form.getByRole('button', { name: 'Send invitation' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Invitation made for ${email}` })
        .waitFor();
      const sent = await focusSettled(page, 'after sending the invitation');
      assert.equal(sent.role, 'status');
      assert.match(sent.text, /^Invitation made for /);

      // The test server has no SMTP_URL: the e-mail is only kept in the outbox, so the link is shown.
      const link = new URL((await page.getByTestId('invitation-link').textContent()) ?? '');
      assert.equal(link.pathname, '/accept-invitation');
      assert.ok(link.searchParams.get('token'), 'the link carries the token');
      await page.getByRole('button', { name: 'Copy link' }).click();
      await page.getByRole('status').filter({ hasText: 'The link is on your clipboard.' }).waitFor();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), link.toString());
      await axe(page, 'team: an invitation without mail');
      await screenshot(page, 'team-invitation-link', page.getByTestId('invitation-link'));
    }));
});
