/** API keys (contract §2.3): creation, both header forms, revocation, expiry, scopes, notifications. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
  type ApiKeyOut,
  call,
  createApiKey,
  expectError,
  expectStatus,
  login,
  PASSWORD,
  type Page,
  registerUser,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';

interface TestApiKeyBody {
  valid: boolean;
  api_key: { id: string; name: string; prefix: string; scopes: string[] };
  workspace_id: string;
}

interface NotificationOut {
  id: string;
  type: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  read: boolean;
  created_at: string;
}

describe('API keys', () => {
  let t: TestApp;
  let owner: SignedUpUser;

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'keys');
  });
  after(async () => t?.close());

  const listKeys = async (): Promise<Page<ApiKeyOut>> =>
    expectStatus<Page<ApiKeyOut>>(
      await call(t, '/account/api-keys', { token: owner.tokens.access_token }),
      200,
      'list keys',
    );

  test('create → 201 with a gf_live_ key shown once; the list never shows it', async () => {
    const res = await call(t, '/account/api-keys', {
      token: owner.tokens.access_token,
      body: { name: 'CI', scopes: ['geofences:write', 'devices:read'] },
    });
    const created = expectStatus<ApiKeyOut & { key: string }>(res, 201, 'create');
    assert.match(created.key, /^gf_live_[A-Za-z0-9_-]{43,}$/, 'gf_live_ + ≥ 32 random bytes');
    assert.ok(created.key.startsWith(created.prefix), 'prefix is the start of the key');
    assert.ok(created.prefix.length >= 8 && created.prefix.length <= 12, `prefix length ${created.prefix}`);
    assert.equal(created.name, 'CI');
    assert.deepEqual(created.scopes, ['geofences:write', 'devices:read']);
    assert.equal(created.created_at, t.clock.now().toISOString());
    assert.equal(created.last_used_at, null);
    assert.equal(created.expires_at, null);

    const listRes = await call(t, '/account/api-keys', { token: owner.tokens.access_token });
    assert.ok(!listRes.body.includes(created.key), 'the secret never appears in the list');
    const listed = expectStatus<Page<ApiKeyOut>>(listRes, 200).results.find((k) => k.id === created.id);
    assert.ok(listed, 'the new key is listed');
    assert.equal('key' in listed, false);
    assert.deepEqual(listed, {
      id: created.id,
      name: 'CI',
      scopes: created.scopes,
      prefix: created.prefix,
      created_at: created.created_at,
      last_used_at: null,
      expires_at: null,
    });
  });

  test('GET /auth/test-api-key accepts the key as Bearer and as X-API-Key; a JWT there → 401', async () => {
    const created = await createApiKey(t, owner.tokens.access_token, ['events:read'], { name: 'probe' });
    const expected: TestApiKeyBody = {
      valid: true,
      api_key: { id: created.id, name: 'probe', prefix: created.prefix, scopes: ['events:read'] },
      workspace_id: owner.workspace.id,
    };
    const bearer = await call(t, '/auth/test-api-key', { token: created.key });
    assert.deepEqual(expectStatus(bearer, 200, 'Authorization: Bearer'), expected);
    const header = await call(t, '/auth/test-api-key', { apiKey: created.key });
    assert.deepEqual(expectStatus(header, 200, 'X-API-Key'), expected);

    expectError(
      await call(t, '/auth/test-api-key', { token: owner.tokens.access_token }),
      401,
      undefined,
      'JWT at test-api-key',
    );
    expectError(await call(t, '/auth/test-api-key'), 401, undefined, 'no key');
    expectError(
      await call(t, '/auth/test-api-key', { apiKey: `${created.key.slice(0, -2)}xx` }),
      401,
      undefined,
      'altered key',
    );
    expectError(
      await call(t, '/auth/me', { token: created.key }),
      401,
      undefined,
      'API key at a JWT-only route',
    );
  });

  test('a revoked key → 401 at once; it leaves the list; revoking again → 404', async () => {
    const created = await createApiKey(t, owner.tokens.access_token, ['events:read']);
    expectStatus(await call(t, '/auth/test-api-key', { apiKey: created.key }), 200, 'before revocation');
    const revoked = await call(t, `/account/api-keys/${created.id}`, {
      method: 'DELETE',
      token: owner.tokens.access_token,
    });
    assert.equal(revoked.statusCode, 204, revoked.body);
    assert.equal(revoked.body, '');
    // No clock movement: the authentication cache must not keep a revoked key alive.
    expectError(
      await call(t, '/auth/test-api-key', { apiKey: created.key }),
      401,
      undefined,
      'revoked (header)',
    );
    expectError(
      await call(t, '/auth/test-api-key', { token: created.key }),
      401,
      undefined,
      'revoked (bearer)',
    );
    assert.ok(!(await listKeys()).results.some((k) => k.id === created.id), 'revoked key not listed');
    expectError(
      await call(t, `/account/api-keys/${created.id}`, {
        method: 'DELETE',
        token: owner.tokens.access_token,
      }),
      404,
      'NOT_FOUND',
      'revoke twice',
    );
  });

  test('a key with expires_at works until then and → 401 after', async () => {
    const expiresAt = new Date(t.clock.now().getTime() + 3600_000).toISOString();
    const created = await createApiKey(t, owner.tokens.access_token, ['events:read'], {
      expires_at: expiresAt,
    });
    assert.equal(created.expires_at, expiresAt);
    t.clock.advance(3600_000 - 1000);
    expectStatus(
      await call(t, '/auth/test-api-key', { apiKey: created.key }),
      200,
      'one second before expiry',
    );
    t.clock.advance(2000);
    expectError(await call(t, '/auth/test-api-key', { apiKey: created.key }), 401, undefined, 'after expiry');

    const past = await call(t, '/account/api-keys', {
      token: owner.tokens.access_token,
      body: {
        name: 'stale',
        scopes: ['events:read'],
        expires_at: new Date(t.clock.now().getTime() - 1000).toISOString(),
      },
    });
    assert.ok(
      [400, 422].includes(past.statusCode),
      `expires_at in the past is refused: ${past.statusCode} ${past.body}`,
    );
  });

  test('an unknown scope name → 422 with loc [body, scopes, <integer index>]', async () => {
    const res = await call(t, '/account/api-keys', {
      token: owner.tokens.access_token,
      body: { name: 'bad', scopes: ['geofences:read', 'geofences:delete'] },
    });
    const body = expectError(res, 422, 'VALIDATION_ERROR', 'unknown scope');
    const issues = body.detail as Array<{ type: string; loc: Array<string | number>; msg: string }>;
    assert.ok(Array.isArray(issues));
    const issue = issues.find((i) => i.loc[1] === 'scopes');
    assert.ok(issue, `an issue for scopes in ${res.body}`);
    assert.deepEqual(issue.loc, ['body', 'scopes', 1]);
    assert.equal(typeof issue.loc[2], 'number');
    assert.ok(['enum', 'literal_error'].includes(issue.type), issue.type);
    assert.equal(typeof issue.msg, 'string');
  });

  test('last_used_at is set when the key is used', async () => {
    const created = await createApiKey(t, owner.tokens.access_token, ['events:read']);
    t.clock.advance(5000);
    const usedAt = t.clock.now().toISOString();
    expectStatus(await call(t, '/auth/test-api-key', { apiKey: created.key }), 200);
    // The write happens off the request path: poll briefly.
    let lastUsed: string | null | undefined = null;
    for (let i = 0; i < 50 && !lastUsed; i++) {
      lastUsed = (await listKeys()).results.find((k) => k.id === created.id)?.last_used_at;
      if (!lastUsed) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(lastUsed, usedAt);
  });

  test('creating and revoking keys notifies the owner (api_key.created / api_key.revoked)', async () => {
    const admin = await signUp(t, 'notified');
    const created = await createApiKey(t, admin.tokens.access_token, ['events:read'], { name: 'noticed' });
    expectStatus(
      await call(t, `/account/api-keys/${created.id}`, {
        method: 'DELETE',
        token: admin.tokens.access_token,
      }),
      204,
    );
    const list = expectStatus<Page<NotificationOut>>(
      await call(t, '/account/notifications', { token: admin.tokens.access_token }),
      200,
      'notifications',
    );
    const types = list.results.map((n) => n.type);
    assert.deepEqual(types, ['api_key.revoked', 'api_key.created'], 'newest first');
    for (const n of list.results) {
      assert.equal(n.data.api_key_id, created.id);
      assert.equal(n.data.prefix, created.prefix);
      assert.equal(n.read, false);
      assert.ok(n.title.length > 0 && n.body.includes(created.prefix));
    }
    assert.equal(list.pagination.total, 2);
  });

  test('a member (not owner/admin) gets 403 INSUFFICIENT_PERMISSIONS creating a key', async () => {
    const member = await registerUser(t);
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email: member.email, role: 'member' },
      }),
      201,
      'add member',
    );
    const tokens = await login(t, member.email, PASSWORD, { workspaceId: owner.workspace.id });
    const res = await call(t, '/account/api-keys', {
      token: tokens.access_token,
      body: { name: 'member key', scopes: ['events:read'] },
    });
    expectError(res, 403, 'INSUFFICIENT_PERMISSIONS', 'member creates a key');
    expectError(
      await call(t, '/account/api-keys', { token: tokens.access_token }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'member lists keys',
    );
  });

  test('a key cannot mint a key with scopes it lacks (403); within its scopes it can (201)', async () => {
    const minter = await createApiKey(t, owner.tokens.access_token, ['account:write', 'events:read']);
    for (const scopes of [['geofences:read'], ['*'], ['events:read', 'webhooks:write']]) {
      const res = await call(t, '/account/api-keys', {
        apiKey: minter.key,
        body: { name: 'escalate', scopes },
      });
      expectError(res, 403, 'INSUFFICIENT_PERMISSIONS', `mint ${scopes.join(',')}`);
    }
    const allowed = await call(t, '/account/api-keys', {
      apiKey: minter.key,
      body: { name: 'narrower', scopes: ['events:read', 'account:read'] },
    });
    const child = expectStatus<{ key: string; scopes: string[] }>(allowed, 201, 'mint within scopes');
    assert.deepEqual(child.scopes, ['events:read', 'account:read']);
    expectStatus(await call(t, '/auth/test-api-key', { apiKey: child.key }), 200, 'minted key works');
  });
});

describe('API keys and the owner role', () => {
  let t: TestApp;
  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  test('an admin cannot hand out or take away the owner role through an API key', async () => {
    const owner = await signUp(t, 'owner');
    const admin = await registerUser(t);
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email: admin.email, role: 'admin' },
      }),
      201,
      'add admin',
    );
    const adminTokens = await login(t, admin.email, PASSWORD, { workspaceId: owner.workspace.id });
    const self = `/workspaces/${owner.workspace.id}/members/${admin.user.id}`;
    // Directly, the admin is refused (only owners grant ownership)…
    expectError(
      await call(t, self, { method: 'PATCH', token: adminTokens.access_token, body: { role: 'owner' } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'admin promotes itself with its JWT',
    );
    // …and a key the admin mints must not be a way around that.
    const key = await createApiKey(t, adminTokens.access_token, ['workspaces:write']);
    expectError(
      await call(t, self, { method: 'PATCH', apiKey: key.key, body: { role: 'owner' } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'admin promotes itself with its API key',
    );
    const outsider = await registerUser(t);
    expectError(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        apiKey: key.key,
        body: { email: outsider.email, role: 'owner' },
      }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'admin adds an owner with its API key',
    );
    expectError(
      await call(t, `/workspaces/${owner.workspace.id}/members/${owner.user.id}`, {
        method: 'PATCH',
        apiKey: key.key,
        body: { role: 'member' },
      }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'admin demotes the owner with its API key',
    );
  });
});
