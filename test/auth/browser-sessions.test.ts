/**
 * Browser sessions (contract §2.2): with `use_cookie` the refresh token lives in an HttpOnly,
 * SameSite=Strict cookie limited to the auth routes; a refresh from it is honoured only from the
 * service's own origin; logout clears it; API clients see no change.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  expectError,
  expectStatus,
  PASSWORD,
  randomIp,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';

const PUBLIC_URL = 'https://geo.example.test';
const OWN = { origin: PUBLIC_URL };

interface BrowserTokens {
  access_token: string;
  expires_in: number;
  token_type: string;
  refresh_token_cookie: true;
  refresh_token?: string;
}

/** The Set-Cookie lines of a response, by cookie name. */
function setCookies(res: LightMyRequestResponse): Map<string, string> {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)];
  return new Map(lines.map((line) => [line.slice(0, line.indexOf('=')), line]));
}

function cookieOf(res: LightMyRequestResponse): string {
  const line = setCookies(res).get('gf_refresh');
  assert.ok(line, `gf_refresh set in ${JSON.stringify(res.headers['set-cookie'])}`);
  return line.slice(0, line.indexOf(';'));
}

describe('browser sessions: the refresh token in an HttpOnly cookie', () => {
  let t: TestApp;
  let account: SignedUpUser;

  before(async () => {
    t = await startIdentityApp({ env: { PUBLIC_URL } });
    account = await signUp(t, 'browser');
  });
  after(async () => t?.close());

  const browserLogin = async (): Promise<{
    tokens: BrowserTokens;
    cookie: string;
    res: LightMyRequestResponse;
  }> => {
    const res = await call(t, '/auth/login', {
      body: { email: account.email, password: PASSWORD, use_cookie: true },
      remoteAddress: randomIp(),
    });
    const tokens = expectStatus<BrowserTokens>(res, 200, 'browser login');
    return { tokens, cookie: cookieOf(res), res };
  };
  const refreshFromCookie = (cookie: string, headers: Record<string, string> = OWN) =>
    call(t, '/auth/refresh', { body: {}, headers: { cookie, ...headers } });

  test('login with use_cookie answers the access token alone and sets the cookies with the contract’s attributes', async () => {
    const { tokens, res } = await browserLogin();
    assert.equal(tokens.refresh_token, undefined, 'no refresh token in the body');
    assert.equal(tokens.refresh_token_cookie, true);
    assert.equal(tokens.token_type, 'Bearer');
    expectStatus(await call(t, '/auth/me', { token: tokens.access_token }), 200, 'the access token works');
    const cookies = setCookies(res);
    const refresh = cookies.get('gf_refresh') ?? '';
    assert.match(refresh, /^gf_refresh=ey[\w-]+\.[\w-]+\.[\w-]+;/);
    for (const attribute of [
      'HttpOnly',
      'SameSite=Strict',
      'Path=/api/v1/auth',
      'Secure',
      `Max-Age=${7 * 86400}`,
    ])
      assert.ok(refresh.split('; ').includes(attribute), `${attribute} in ${refresh}`);
    const flag = cookies.get('gf_session') ?? '';
    assert.match(flag, /^gf_session=1; Path=\/;/);
    assert.ok(!flag.includes('HttpOnly'), 'the flag is readable by the page');
  });

  test('a refresh from the cookie rotates it; the used cookie is then refused and ends the session', async () => {
    const { cookie } = await browserLogin();
    const res = await refreshFromCookie(cookie);
    const next = expectStatus<BrowserTokens>(res, 200, 'refresh from the cookie');
    assert.equal(next.refresh_token, undefined);
    const rotated = cookieOf(res);
    assert.notEqual(rotated, cookie, 'a new refresh token in the cookie');
    expectStatus(await call(t, '/auth/me', { token: next.access_token }), 200);
    // The old cookie presented again is a reuse: the session ends and its cookies are cleared.
    const reuse = await refreshFromCookie(cookie);
    expectError(reuse, 401, undefined, 'reused cookie');
    assert.match(setCookies(reuse).get('gf_refresh') ?? '', /^gf_refresh=; .*Max-Age=0/);
    expectError(await refreshFromCookie(rotated), 401, undefined, 'the whole session is revoked');
  });

  test('the cookie is honoured only from the service’s own origin', async () => {
    const { cookie } = await browserLogin();
    const foreign = await refreshFromCookie(cookie, { origin: 'https://evil.example' });
    expectError(foreign, 403, undefined, 'another origin');
    expectError(await refreshFromCookie(cookie, {}), 403, undefined, 'no Origin header');
    // The host the request was addressed to counts as the service's own origin too (PUBLIC_URL unset, a proxy).
    const sameHost = await refreshFromCookie(cookie, { origin: 'http://localhost:80', host: 'localhost:80' });
    expectStatus(sameHost, 200, 'the addressed host');
    // The refused attempts did not use the token up.
    expectError(
      await refreshFromCookie(cookie),
      401,
      undefined,
      'the cookie was rotated once, by the same-host refresh',
    );
  });

  test('without a body token or a cookie the refresh is a 422 naming refresh_token, as before', async () => {
    const res = await call(t, '/auth/refresh', { body: {}, headers: OWN });
    const body = expectStatus<{ detail: Array<{ loc: unknown[]; type: string }> }>(res, 422);
    assert.deepEqual(body.detail[0]?.loc, ['body', 'refresh_token']);
    assert.equal(body.detail[0]?.type, 'missing');
  });

  test('a refresh token in the body wins over a cookie and is answered as a pair (API clients unchanged)', async () => {
    const { cookie } = await browserLogin();
    const res = await call(t, '/auth/refresh', {
      body: { refresh_token: account.tokens.refresh_token },
      headers: { cookie },
    });
    const pair = expectStatus<{ refresh_token: string }>(res, 200);
    assert.equal(typeof pair.refresh_token, 'string');
    assert.equal(res.headers['set-cookie'], undefined, 'no cookie for an API client');
    expectStatus(await refreshFromCookie(cookie), 200, 'the browser session was untouched');
  });

  test('logout clears the cookies and ends the session the cookie names too', async () => {
    const first = await browserLogin();
    // Another tab switched workspace: the cookie now names a second session of the same user.
    const switched = await call(t, '/auth/switch-workspace', {
      token: first.tokens.access_token,
      body: { workspace_id: account.workspace.id, use_cookie: true },
    });
    const second = expectStatus<BrowserTokens>(switched, 200, 'switch with use_cookie');
    assert.equal(second.refresh_token, undefined);
    const cookie = cookieOf(switched);

    const out = await call(t, '/auth/logout', {
      token: first.tokens.access_token,
      headers: { cookie },
      method: 'POST',
    });
    expectStatus(out, 204);
    const cleared = setCookies(out);
    assert.match(cleared.get('gf_refresh') ?? '', /^gf_refresh=; .*Max-Age=0/);
    assert.match(cleared.get('gf_session') ?? '', /^gf_session=; .*Max-Age=0/);
    expectError(await call(t, '/auth/me', { token: first.tokens.access_token }), 401, undefined, 'first tab');
    expectError(await call(t, '/auth/me', { token: second.access_token }), 401, undefined, 'second tab');
    expectError(await refreshFromCookie(cookie), 401, undefined, 'the cookie’s session');
  });

  test('logout leaves another user’s session alone when a stale cookie names it', async () => {
    const other = await signUp(t, 'other-browser');
    const res = await call(t, '/auth/login', {
      body: { email: other.email, password: PASSWORD, use_cookie: true },
      remoteAddress: randomIp(),
    });
    expectStatus(res, 200);
    const cookie = cookieOf(res);
    const mine = await browserLogin();
    expectStatus(
      await call(t, '/auth/logout', { token: mine.tokens.access_token, headers: { cookie }, method: 'POST' }),
      204,
    );
    expectStatus(await refreshFromCookie(cookie), 200, 'the other user’s session lives on');
  });
});
