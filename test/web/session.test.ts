/**
 * The signed-in session in a real browser against the real server: the silent refresh of the
 * access token before it expires (refresh tokens rotate: the replaced one is refused afterwards),
 * the refresh-and-replay of a request that meets an expired token, and the workspace switcher.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, SignJWT } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { TEST_JWT_SECRET } from '../helpers/app.ts';
import { httpCall, httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type DashboardServer, registerAccount } from './dashboard-server.ts';

interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

/**
 * The same access token as the server issued, expired 100 s ago: what a tab holds after sleeping
 * past its planned refresh. Signed with the server's key (the test servers share TEST_JWT_SECRET),
 * so the server itself judges it and answers TOKEN_EXPIRED.
 */
async function expiredCopy(token: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...decodeJwt(token), iat: now - 400, exp: now - 100 })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
}

/**
 * The session's tests sign in to the API keys page: the simplest signed-in page, so that only the
 * session decides whether they pass.
 */
const KEYS_PAGE = '/login?next=%2Fapi-keys';

async function heading(page: Page, name: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

describe('dashboard: session', () => {
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

  test('silent refresh: at 80 % of the access token’s lifetime the pair is renewed, the page uses the new one, the old refresh token is refused', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'refresh');
      // The shortest lifetime a workspace allows; the page's clock (not the server's) is moved on.
      await httpExpect(200, base, 'PATCH', `/workspaces/${account.workspaceId}`, {
        token: account.token,
        body: { settings: { access_token_ttl_seconds: 300 } },
      });
      await page.clock.install();
      const refreshes: string[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/api/v1/auth/refresh') refreshes.push(request.url());
      });

      await page.goto(KEYS_PAGE);
      const loginAnswer = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/login'));
      await signIn(page, account.email, account.password);
      const first = (await (await loginAnswer).json()) as TokenPair;
      assert.equal(first.expires_in, 300);
      await page.getByText('No keys yet.').waitFor();

      await page.clock.fastForward(230_000);
      assert.deepEqual(refreshes, [], 'no refresh before 80 % of the lifetime (240 s)');

      const refreshAnswer = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/refresh'));
      await page.clock.fastForward(15_000);
      const refreshed = await refreshAnswer;
      assert.equal(refreshed.status(), 200);
      const second = (await refreshed.json()) as TokenPair;
      assert.equal(
        (refreshed.request().postDataJSON() as { refresh_token: string }).refresh_token,
        first.refresh_token,
      );
      assert.notEqual(second.refresh_token, first.refresh_token, 'refresh tokens rotate');
      assert.notEqual(second.access_token, first.access_token);

      // The next API call of the page carries the new access token and succeeds.
      const createAnswer = page.waitForResponse(
        (r) => r.url().endsWith('/api/v1/account/api-keys') && r.request().method() === 'POST',
      );
      // The page lists the keys again after creating one; that answer must be in before the session
      // is ended below, or the list would meet the ended session.
      const listAnswer = page.waitForResponse(
        (r) =>
          r.url().includes('/api/v1/account/api-keys?') &&
          r.request().method() === 'GET' &&
          r.request().headers().authorization === `Bearer ${second.access_token}`,
      );
      await page.getByLabel('Name').fill('After the refresh');
      await page.getByRole('checkbox', { name: 'Everything' }).check();
      await page.getByRole('button', { name: 'Create key' }).click();
      const created = await createAnswer;
      assert.equal(created.status(), 201);
      assert.equal(created.request().headers().authorization, `Bearer ${second.access_token}`);
      await page.getByTestId('new-api-key').waitFor();
      assert.equal((await listAnswer).status(), 200);
      assert.equal(refreshes.length, 1, 'one refresh');

      // The replaced refresh token is refused; presenting it ends the whole session (reuse).
      const reused = await httpCall(base, 'POST', '/auth/refresh', {
        body: { refresh_token: first.refresh_token },
      });
      assert.equal(reused.status, 401);
      assert.equal((await httpCall(base, 'GET', '/auth/me', { token: second.access_token })).status, 401);
    }));

  test('a request that meets an expired access token refreshes once and is replayed', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'replay');
      // Sign-in hands the page an access token that has already expired (and the real refresh token).
      let issued: TokenPair | undefined;
      await page.route('**/api/v1/auth/login', async (route) => {
        const response = await route.fetch();
        issued = (await response.json()) as TokenPair;
        await route.fulfill({
          response,
          json: { ...issued, access_token: await expiredCopy(issued.access_token) },
        });
      });
      const me: Array<{ status: number; authorization: string | undefined; body: { error_code?: string } }> =
        [];
      page.on('response', async (response) => {
        if (!response.url().endsWith('/api/v1/auth/me')) return;
        me.push({
          status: response.status(),
          authorization: response.request().headers().authorization,
          body: (await response.json()) as { error_code?: string },
        });
      });
      watch.allowHttpError(401, '/api/v1/auth/me');

      await page.goto(KEYS_PAGE);
      const refreshAnswer = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/refresh'));
      await signIn(page, account.email, account.password);
      const refreshed = await refreshAnswer;
      assert.equal(refreshed.status(), 200);
      assert.ok(issued);
      assert.equal(
        (refreshed.request().postDataJSON() as { refresh_token: string }).refresh_token,
        issued.refresh_token,
      );
      const renewed = (await refreshed.json()) as TokenPair;
      await heading(page, 'API keys');
      await page.getByText('replay user').waitFor();

      assert.equal(me.length, 2, 'the call once with the expired token, once replayed');
      assert.equal(me[0]?.status, 401);
      assert.equal(me[0]?.body.error_code, 'TOKEN_EXPIRED', 'the server itself found the token expired');
      assert.equal(me[1]?.status, 200);
      assert.equal(me[1]?.authorization, `Bearer ${renewed.access_token}`);
    }));

  test('the workspace switcher switches to another of the user’s workspaces', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'switch');
      const other = await httpExpect<{ id: string }>(201, base, 'POST', '/workspaces', {
        token: account.token,
        body: { name: 'Second workspace' },
      });
      await page.goto(KEYS_PAGE);
      await signIn(page, account.email, account.password);
      await heading(page, 'API keys');
      const switcher = page.getByRole('combobox', { name: 'Workspace' });
      assert.equal(await switcher.inputValue(), account.workspaceId);

      const switched = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/switch-workspace'));
      await switcher.selectOption({ label: 'Second workspace' });
      const pair = (await (await switched).json()) as TokenPair;
      const me = await httpExpect<{ workspace_id: string }>(200, base, 'GET', '/auth/me', {
        token: pair.access_token,
      });
      assert.equal(me.workspace_id, other.id, 'the new token is for the chosen workspace');
      await page.waitForFunction(
        `document.querySelector('.workspace-switcher select').value === ${JSON.stringify(other.id)}`,
      );
      assert.equal(await switcher.locator('option:checked').textContent(), 'Second workspace');
      await axe(page);
      await screenshot(page, 'workspace-switched');
    }));
});
