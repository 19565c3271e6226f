/**
 * A key never does more than its creator may do now (contract §2.3): it acts with its scopes limited
 * by the creator's current role in the key's workspace, and removing the creator from the workspace
 * revokes the keys they made there, with a notification to the owners and admins. Every change takes
 * effect at once on this node, with the key's cache entry warm (the two-node case is in
 * cross-node-invalidation.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import {
  type ApiKeyOut,
  type CreatedApiKey,
  call,
  createApiKey,
  expectError,
  expectStatus,
  login,
  PASSWORD,
  type Page,
  type RegisteredUser,
  registerUser,
  type SignedUpUser,
  signUp,
  startIdentityApp,
  type TokenPair,
} from '../helpers/identity.ts';

interface NotificationOut {
  type: string;
  body: string;
  data: Record<string, unknown>;
}

describe('API keys bounded by their creator', () => {
  let t: TestApp;
  let owner: SignedUpUser;

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'bound-owner');
  });
  after(async () => t?.close());

  const workspacePath = () => `/workspaces/${owner.workspace.id}`;

  /** A fresh user added to the owner's workspace with `role`, signed in there. */
  async function join(role: 'admin' | 'member'): Promise<RegisteredUser & { tokens: TokenPair }> {
    const user = await registerUser(t);
    expectStatus(
      await call(t, `${workspacePath()}/members`, {
        token: owner.tokens.access_token,
        body: { email: user.email, role },
      }),
      201,
      `add ${role}`,
    );
    return { ...user, tokens: await login(t, user.email, PASSWORD, { workspaceId: owner.workspace.id }) };
  }

  const setRole = async (userId: string, role: 'admin' | 'member') =>
    expectStatus(
      await call(t, `${workspacePath()}/members/${userId}`, {
        method: 'PATCH',
        token: owner.tokens.access_token,
        body: { role },
      }),
      200,
      `set role ${role}`,
    );

  const remove = async (userId: string) =>
    expectStatus(
      await call(t, `${workspacePath()}/members/${userId}`, {
        method: 'DELETE',
        token: owner.tokens.access_token,
      }),
      204,
      'remove member',
    );

  /** Owner/admin operations, each through the key. */
  const adminOperations: Record<string, (key: string) => Promise<LightMyRequestResponse>> = {
    'PATCH /workspaces/{id}': (key) =>
      call(t, workspacePath(), { method: 'PATCH', apiKey: key, body: { name: 'Renamed by a key' } }),
    'POST /account/api-keys': (key) =>
      call(t, '/account/api-keys', { apiKey: key, body: { name: 'minted', scopes: ['events:read'] } }),
    'GET /account/api-keys': (key) => call(t, '/account/api-keys', { apiKey: key }),
    'PUT /subscriptions/current': (key) =>
      call(t, '/subscriptions/current', { method: 'PUT', apiKey: key, body: { plan: 'free' } }),
    'GET /workspaces/{id}/invitations': (key) => call(t, `${workspacePath()}/invitations`, { apiKey: key }),
  };

  /** Member operations: reading and writing data. */
  const memberOperations: Record<string, (key: string) => Promise<LightMyRequestResponse>> = {
    'GET /devices': (key) => call(t, '/devices', { apiKey: key }),
    'POST /devices': (key) => call(t, '/devices', { apiKey: key, body: { name: 'made by a bounded key' } }),
    'GET /auth/test-api-key': (key) => call(t, '/auth/test-api-key', { apiKey: key }),
  };

  async function expectAdminOperations(key: string, allowed: boolean, when: string): Promise<void> {
    for (const [label, run] of Object.entries(adminOperations)) {
      const res = await run(key);
      if (allowed) assert.ok(res.statusCode < 300, `${when}: ${label} → ${res.statusCode} ${res.body}`);
      else expectError(res, 403, 'INSUFFICIENT_PERMISSIONS', `${when}: ${label}`);
    }
  }

  async function expectMemberOperations(key: string, when: string): Promise<void> {
    for (const [label, run] of Object.entries(memberOperations)) {
      const res = await run(key);
      assert.ok(res.statusCode < 300, `${when}: ${label} → ${res.statusCode} ${res.body}`);
    }
  }

  test('an admin demoted to member: the key gets 403 on owner/admin operations at once, and still works on member operations', async () => {
    const admin = await join('admin');
    const key = await createApiKey(t, admin.tokens.access_token, ['*']);
    await expectAdminOperations(key.key, true, 'while the creator is an admin');

    await setRole(admin.user.id, 'member');
    // No clock movement: the key's cache entry is warm, the demotion must still show at once.
    await expectAdminOperations(key.key, false, 'after the demotion');
    await expectMemberOperations(key.key, 'after the demotion');

    // The key follows the creator's current role both ways.
    await setRole(admin.user.id, 'admin');
    await expectAdminOperations(key.key, true, 'after promotion again');
  });

  test('a key minted by a key is bound to the same person', async () => {
    const admin = await join('admin');
    const parent = await createApiKey(t, admin.tokens.access_token, ['*']);
    const child = expectStatus<CreatedApiKey>(
      await call(t, '/account/api-keys', { apiKey: parent.key, body: { name: 'child', scopes: ['*'] } }),
      201,
      'mint with a key',
    );
    await setRole(admin.user.id, 'member');
    await expectAdminOperations(child.key, false, 'child after the demotion');
    await expectMemberOperations(child.key, 'child after the demotion');
    await remove(admin.user.id);
    expectError(await call(t, '/devices', { apiKey: child.key }), 401, undefined, 'child after removal');
  });

  test('a removed member’s keys → 401 for reading data and minting keys; the owners are notified; re-adding does not bring them back', async () => {
    const admin = await join('admin');
    const ownerKey = await createApiKey(t, owner.tokens.access_token, ['*'], { name: 'owner key' });
    const keys = [
      await createApiKey(t, admin.tokens.access_token, ['*'], { name: 'admin key one' }),
      await createApiKey(t, admin.tokens.access_token, ['devices:read'], { name: 'admin key two' }),
    ];
    for (const key of keys) expectStatus(await call(t, '/devices', { apiKey: key.key }), 200, 'before');

    await remove(admin.user.id);
    for (const key of keys) {
      expectError(await call(t, '/devices', { apiKey: key.key }), 401, undefined, `${key.name}: read data`);
      expectError(
        await call(t, '/account/api-keys', { apiKey: key.key, body: { name: 'x', scopes: ['events:read'] } }),
        401,
        undefined,
        `${key.name}: mint a key`,
      );
    }
    expectStatus(await call(t, '/devices', { apiKey: ownerKey.key }), 200, 'the owner’s key is untouched');
    const listed = expectStatus<Page<ApiKeyOut>>(
      await call(t, '/account/api-keys', { token: owner.tokens.access_token, query: { limit: '200' } }),
      200,
    );
    const listedIds = listed.results.map((k) => k.id);
    for (const key of keys) assert.ok(!listedIds.includes(key.id), `${key.name} left the list`);
    assert.ok(listedIds.includes(ownerKey.id));

    const notices = expectStatus<Page<NotificationOut>>(
      await call(t, '/account/notifications', { token: owner.tokens.access_token, query: { limit: '200' } }),
      200,
    ).results.filter((n) => n.type === 'api_key.revoked' && n.data.reason === 'creator_left_workspace');
    for (const key of keys) {
      const notice = notices.find((n) => n.data.api_key_id === key.id);
      assert.ok(notice, `a notice for ${key.name}`);
      assert.equal(notice.data.prefix, key.prefix);
      assert.ok(notice.body.includes(admin.email), notice.body);
    }

    // Back in the workspace, and an admin again: the revoked keys stay revoked.
    expectStatus(
      await call(t, `${workspacePath()}/members`, {
        token: owner.tokens.access_token,
        body: { email: admin.email, role: 'admin' },
      }),
      201,
      're-add as admin',
    );
    for (const key of keys)
      expectError(
        await call(t, '/devices', { apiKey: key.key }),
        401,
        undefined,
        `${key.name} after re-adding`,
      );
  });

  test('leaving the workspace oneself revokes one’s keys too', async () => {
    const admin = await join('admin');
    const key = await createApiKey(t, admin.tokens.access_token, ['devices:read']);
    expectStatus(
      await call(t, `${workspacePath()}/members/${admin.user.id}`, {
        method: 'DELETE',
        token: admin.tokens.access_token,
      }),
      204,
      'leave',
    );
    expectError(await call(t, '/devices', { apiKey: key.key }), 401, undefined, 'after leaving');
  });
});

describe('API-key scopes and the member role', () => {
  let t: TestApp;
  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  test('scopes a member lacks are not granted to a demoted admin’s `*` key (workspaces:write, subscriptions:write)', async () => {
    const owner = await signUp(t, 'scopes-owner');
    const admin = await registerUser(t);
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email: admin.email, role: 'admin' },
      }),
      201,
    );
    const tokens = await login(t, admin.email, PASSWORD, { workspaceId: owner.workspace.id });
    const key = await createApiKey(t, tokens.access_token, ['*']);
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/members/${admin.user.id}`, {
        method: 'PATCH',
        token: owner.tokens.access_token,
        body: { role: 'member' },
      }),
      200,
    );
    const res = await call(t, `/workspaces/${owner.workspace.id}/members`, {
      apiKey: key.key,
      body: { email: 'someone@example.com', role: 'member' },
    });
    const body = expectError(res, 403, 'INSUFFICIENT_PERMISSIONS', 'add a member');
    assert.match(String(body.detail), /workspaces:write/);
    // What the key was granted is still reported as granted; what it may do is bounded.
    const info = expectStatus<{ api_key: { scopes: string[] } }>(
      await call(t, '/auth/test-api-key', { apiKey: key.key }),
      200,
    );
    assert.deepEqual(info.api_key.scopes, ['*']);
  });
});
