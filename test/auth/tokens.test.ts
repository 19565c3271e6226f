/**
 * Access and refresh tokens (contract §2.2): expiry by the app's clock, forgery in its usual forms
 * (tampering, `alg: none`, a foreign secret, RS/HS confusion), and token-type confusion.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { TEST_JWT_SECRET, type TestApp } from '../helpers/app.ts';
import {
  call,
  decodeJwt,
  expectError,
  expectStatus,
  login,
  PASSWORD,
  type SignedUpUser,
  signUp,
  startIdentityApp,
  type TokenPair,
} from '../helpers/identity.ts';

const INVALID = { detail: 'Invalid token' };

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Signs the given claims as a JWT with an HMAC secret (HS256). */
function signHs256(payload: Record<string, unknown>, secret: string | Uint8Array): Promise<string> {
  const key = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(key);
}

describe('access and refresh tokens', () => {
  let t: TestApp;
  let account: SignedUpUser;

  before(async () => {
    t = await startIdentityApp();
    account = await signUp(t, 'tokens');
  });
  after(async () => t?.close());

  const meWith = (token: string) => call(t, '/auth/me', { token });
  const expectInvalid = async (token: string, what: string) =>
    assert.deepEqual(expectError(await meWith(token), 401, undefined, what), INVALID, what);

  test('a token signed with the server secret and the same claims is accepted (control for the forgeries)', async () => {
    const { payload } = decodeJwt(account.tokens.access_token);
    const token = await signHs256({ ...payload, jti: 'another-id' }, TEST_JWT_SECRET);
    expectStatus(await meWith(token), 200, 're-signed token');
  });

  test('no credentials → 401 {"detail":"Not authenticated"} with WWW-Authenticate: Bearer', async () => {
    const res = await call(t, '/auth/me');
    assert.deepEqual(expectError(res, 401, undefined, 'no credentials'), { detail: 'Not authenticated' });
  });

  test('an Authorization header that is not a bearer token → 401 Invalid token', async () => {
    const res = await call(t, '/auth/me', { headers: { authorization: `Basic ${b64('user:pass')}` } });
    assert.deepEqual(expectError(res, 401, undefined, 'Basic auth'), INVALID);
    await expectInvalid('not.a.jwt', 'garbage bearer');
  });

  test('tampered payload or signature → 401 {"detail":"Invalid token"}', async () => {
    const [header = '', payload = '', signature = ''] = account.tokens.access_token.split('.');
    const claims = decodeJwt(account.tokens.access_token).payload;
    const forgedPayload = b64({ ...claims, role: 'owner', wid: '00000000-0000-7000-8000-000000000000' });
    await expectInvalid(`${header}.${forgedPayload}.${signature}`, 'tampered payload');
    const extended = b64({ ...claims, exp: Number(claims.exp) + 86400 * 365 });
    await expectInvalid(`${header}.${extended}.${signature}`, 'tampered expiry');
    // Change a character in the middle of the signature (the last one may only carry padding bits).
    const middle = Math.floor(signature.length / 2);
    const flipped = signature[middle] === 'A' ? 'B' : 'A';
    const badSignature = `${signature.slice(0, middle)}${flipped}${signature.slice(middle + 1)}`;
    await expectInvalid(`${header}.${payload}.${badSignature}`, 'tampered signature');
    await expectInvalid(`${header}.${payload}.`, 'signature stripped');
  });

  test('alg: none is refused', async () => {
    const { payload } = decodeJwt(account.tokens.access_token);
    await expectInvalid(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`, 'alg none');
    await expectInvalid(`${b64({ alg: 'None', typ: 'JWT' })}.${b64(payload)}.`, 'alg None');
  });

  test('HS256 with another secret is refused', async () => {
    const { payload } = decodeJwt(account.tokens.access_token);
    await expectInvalid(await signHs256(payload, `${TEST_JWT_SECRET}-but-different`), 'foreign secret');
  });

  test('RS256-signed tokens are refused, including the RS/HS confusion trick', async () => {
    const { payload } = decodeJwt(account.tokens.access_token);
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const rs256 = await new SignJWT(payload)
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .sign(privateKey);
    await expectInvalid(rs256, 'RS256 token');
    // The classic confusion: HS256 keyed with the (public) RSA key's PEM text.
    await expectInvalid(
      await signHs256(payload, await exportSPKI(publicKey)),
      'HS256 keyed with a public key',
    );
  });

  test('a refresh token is not an access token, and an access token cannot refresh', async () => {
    await expectInvalid(account.tokens.refresh_token, 'refresh token as access token');
    const refreshWithAccess = await call(t, '/auth/refresh', {
      body: { refresh_token: account.tokens.access_token },
    });
    assert.deepEqual(
      expectError(refreshWithAccess, 401, undefined, 'access token at /auth/refresh'),
      INVALID,
    );
    // A validly signed access-typed token with refresh-style claims is still refused at /auth/refresh.
    const claims = decodeJwt(account.tokens.refresh_token).payload;
    const retyped = await signHs256({ ...claims, typ: 'access' }, TEST_JWT_SECRET);
    expectError(
      await call(t, '/auth/refresh', { body: { refresh_token: retyped } }),
      401,
      undefined,
      'retyped',
    );
  });

  test('an expired access token → 401 TOKEN_EXPIRED (cached or not), valid up to its last second', async () => {
    const used = await login(t, account.email, PASSWORD);
    const unused = await login(t, account.email, PASSWORD);
    expectStatus(await meWith(used.access_token), 200, 'fresh token');

    t.clock.advance((used.expires_in - 1) * 1000);
    expectStatus(await meWith(used.access_token), 200, 'one second before expiry');

    t.clock.advance(2000);
    for (const [what, pair] of [
      ['token verified before (cached)', used],
      ['token never presented before', unused],
    ] as const) {
      const res = await meWith(pair.access_token);
      assert.deepEqual(expectError(res, 401, 'TOKEN_EXPIRED', what), {
        detail: 'Token has expired',
        error_code: 'TOKEN_EXPIRED',
      });
      assert.equal(res.headers['www-authenticate'], 'Bearer');
    }
    // The refresh token (7 days) still yields a working pair.
    const renewed = expectStatus<TokenPair>(
      await call(t, '/auth/refresh', { body: { refresh_token: unused.refresh_token } }),
      200,
      'refresh after access expiry',
    );
    expectStatus(await meWith(renewed.access_token), 200, 'renewed access token');
  });

  test('two concurrent refreshes with one token: exactly one succeeds, and the session ends', async () => {
    const pair = await login(t, account.email, PASSWORD);
    const results = await Promise.all([
      call(t, '/auth/refresh', { body: { refresh_token: pair.refresh_token } }),
      call(t, '/auth/refresh', { body: { refresh_token: pair.refresh_token } }),
    ]);
    const statuses = results.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [200, 401], `statuses ${statuses.join(', ')}`);
    const winner = results.find((r) => r.statusCode === 200)?.json() as TokenPair;
    // The loser presented a token that had just been rotated away: reuse, so the session is revoked.
    expectError(
      await call(t, '/auth/refresh', { body: { refresh_token: winner.refresh_token } }),
      401,
      undefined,
      'winner refresh token after the race',
    );
    expectError(await meWith(winner.access_token), 401, undefined, 'winner access token after the race');
  });

  test('a refresh token works until 7 days and is refused after (401)', async () => {
    const before = await login(t, account.email, PASSWORD);
    const afterwards = await login(t, account.email, PASSWORD);
    t.clock.advance((7 * 86400 - 1) * 1000);
    expectStatus(
      await call(t, '/auth/refresh', { body: { refresh_token: before.refresh_token } }),
      200,
      'refresh one second before 7 days',
    );
    t.clock.advance(2000);
    const expired = await call(t, '/auth/refresh', { body: { refresh_token: afterwards.refresh_token } });
    expectError(expired, 401, undefined, 'refresh after 7 days');
  });
});
