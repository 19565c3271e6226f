/**
 * The signed-in session in a real browser against the real server (contract §2.2, browser
 * sessions): the refresh token lives in an HttpOnly cookie page script cannot read, so a reload and
 * a new tab stay signed in and signing out ends every tab; the silent refresh of the access token
 * before it expires (the cookie rotates: the replaced token is refused afterwards); the
 * refresh-and-replay of a request that meets an expired token; the workspace switcher; and sign-ins
 * that succeed never lock an address out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, SignJWT } from 'jose';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TEST_JWT_SECRET } from '../helpers/app.ts';
import { httpCall, httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type DashboardServer, registerAccount } from './dashboard-server.ts';

interface BrowserTokens {
  access_token: string;
  refresh_token?: string;
  refresh_token_cookie: true;
  expires_in: number;
}

/** The refresh token the browser holds in its HttpOnly cookie (the test, unlike the page, may read it). */
async function refreshCookie(context: BrowserContext): Promise<string> {
  const cookie = (await context.cookies()).find((c) => c.name === 'gf_refresh');
  assert.ok(cookie, 'the gf_refresh cookie is set');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(cookie.path, '/api/v1/auth');
  return cookie.value;
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

  test('a reload and a new tab stay signed in; page script can read neither the refresh token nor its cookie', () =>
    inPage(browser, base, async (page, _watch, context) => {
      const account = await registerAccount(base, 'reload');
      await page.goto(KEYS_PAGE);
      await signIn(page, account.email, account.password);
      await heading(page, 'API keys');
      const token = await refreshCookie(context);

      const seenByScript = await page.evaluate<{ cookie: string; stored: string }>(
        '({ cookie: document.cookie, stored: JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) })',
      );
      assert.equal(seenByScript.cookie, 'gf_session=1', 'only the flag is readable');
      assert.ok(!seenByScript.stored.includes(token.slice(-20)), 'nothing of the token in web storage');

      await page.reload();
      await heading(page, 'API keys');
      await page.getByText('reload user').waitFor();
      assert.equal(new URL(page.url()).pathname, '/api-keys', 'no detour through the sign-in page');

      // Two more tabs open at the same moment: both sign in from the cookie, one refresh at a time
      // (a refresh token sent twice would end the session).
      const [second, third] = await Promise.all([context.newPage(), context.newPage()]);
      await Promise.all([second.goto('/geofences'), third.goto('/api-keys')]);
      await heading(second, 'Geofences');
      await heading(third, 'API keys');
      await page.getByRole('link', { name: 'Webhooks' }).first().click();
      await heading(page, 'Webhooks');
      assert.equal(
        (await httpCall(base, 'GET', '/auth/me', { token: account.token })).status,
        200,
        'the API client’s own session is untouched',
      );
      await axe(second);
      await screenshot(second, 'session-new-tab');
    }));

  test('signing out in one tab signs out the others and clears the cookie; a reload then asks to sign in', () =>
    inPage(browser, base, async (page, _watch, context) => {
      const account = await registerAccount(base, 'signout');
      await page.goto(KEYS_PAGE);
      await signIn(page, account.email, account.password);
      await heading(page, 'API keys');
      const other = await context.newPage();
      await other.goto('/geofences');
      await heading(other, 'Geofences');
      // Its map has loaded what it shows: no request of its own is under way when the session ends.
      await other.waitForLoadState('networkidle');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await other.getByRole('heading', { name: 'Sign in' }).waitFor();
      assert.deepEqual(
        (await context.cookies()).filter((c) => c.name.startsWith('gf_')),
        [],
        'both cookies cleared',
      );
      await other.reload();
      await other.getByRole('heading', { name: 'Sign in' }).waitFor();
    }));

  test('ten sign-ins in a minute from one address are not locked out (only failures count)', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'tenfold');
      for (let i = 0; i < 10; i++) {
        await page.goto(KEYS_PAGE);
        await signIn(page, account.email, account.password);
        await heading(page, 'API keys');
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      }
    }));

  test('silent refresh: at 80 % of the access token’s lifetime the cookie is renewed, the page uses the new access token, the old refresh token is refused', () =>
    inPage(browser, base, async (page, _watch, context) => {
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
      const first = (await (await loginAnswer).json()) as BrowserTokens;
      assert.equal(first.expires_in, 300);
      assert.equal(first.refresh_token, undefined, 'the refresh token is not in the answer');
      const firstRefresh = await refreshCookie(context);
      await page.getByText('No keys yet.').waitFor();

      await page.clock.fastForward(230_000);
      assert.deepEqual(refreshes, [], 'no refresh before 80 % of the lifetime (240 s)');

      const refreshAnswer = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/refresh'));
      await page.clock.fastForward(15_000);
      const refreshed = await refreshAnswer;
      assert.equal(refreshed.status(), 200);
      const second = (await refreshed.json()) as BrowserTokens;
      assert.deepEqual(refreshed.request().postDataJSON(), {}, 'the token travels in the cookie only');
      assert.ok(
        (await refreshed.request().headerValue('cookie'))?.split('; ').includes(`gf_refresh=${firstRefresh}`),
        'the refresh token in its cookie',
      );
      assert.notEqual(await refreshCookie(context), firstRefresh, 'refresh tokens rotate');
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
        body: { refresh_token: firstRefresh },
      });
      assert.equal(reused.status, 401);
      assert.equal((await httpCall(base, 'GET', '/auth/me', { token: second.access_token })).status, 401);
    }));

  test('a request that meets an expired access token refreshes once and is replayed', () =>
    inPage(browser, base, async (page, watch, context) => {
      const account = await registerAccount(base, 'replay');
      // Sign-in hands the page an access token that has already expired (and the real cookie).
      let issued: BrowserTokens | undefined;
      await page.route('**/api/v1/auth/login', async (route) => {
        const response = await route.fetch();
        issued = (await response.json()) as BrowserTokens;
        await route.fulfill({
          response,
          json: { ...issued, access_token: await expiredCopy(issued.access_token) },
        });
      });
      const me: Array<{
        status: number;
        authorization: string | undefined;
        body: Promise<{ error_code?: string }>;
      }> = [];
      // Recorded as the answers arrive (reading a body first could reorder them).
      page.on('response', (response) => {
        if (!response.url().endsWith('/api/v1/auth/me')) return;
        me.push({
          status: response.status(),
          authorization: response.request().headers().authorization,
          body: response.json() as Promise<{ error_code?: string }>,
        });
      });
      watch.allowHttpError(401, '/api/v1/auth/me');

      await page.goto(KEYS_PAGE);
      const refreshAnswer = page.waitForResponse((r) => r.url().endsWith('/api/v1/auth/refresh'));
      await signIn(page, account.email, account.password);
      const refreshed = await refreshAnswer;
      assert.equal(refreshed.status(), 200);
      assert.ok(issued);
      const renewed = (await refreshed.json()) as BrowserTokens;
      assert.notEqual(renewed.access_token, issued.access_token);
      assert.match(await refreshCookie(context), /^ey/);
      await heading(page, 'API keys');
      await page.getByText('replay user').waitFor();

      assert.equal(me.length, 2, 'the call once with the expired token, once replayed');
      assert.equal(me[0]?.status, 401);
      assert.equal(
        (await me[0]?.body)?.error_code,
        'TOKEN_EXPIRED',
        'the server itself found the token expired',
      );
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
      const pair = (await (await switched).json()) as BrowserTokens;
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
