/**
 * Reach (contract §2.4): every route under /workspaces/{id} acts on any workspace the signed-in user
 * is a member of, with the role of THAT membership, whichever workspace the token was issued for; a
 * workspace the user is not a member of is 404; an API key reaches only its own workspace.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
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
  uniqueEmail,
  type WorkspaceOut,
} from '../helpers/identity.ts';

interface MemberOut {
  user_id: string;
  role: string;
}

describe('reach: /workspaces/{id} with the role of that membership', () => {
  let t: TestApp;

  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => t?.close());

  /** A second workspace created by `owner` while signed in to its first one. */
  async function secondWorkspace(owner: SignedUpUser, name: string): Promise<WorkspaceOut> {
    return expectStatus<WorkspaceOut>(
      await call(t, '/workspaces', { token: owner.tokens.access_token, body: { name } }),
      201,
      'create a second workspace',
    );
  }

  async function addMember(token: string, workspaceId: string, email: string, role: string) {
    return expectStatus<MemberOut>(
      await call(t, `/workspaces/${workspaceId}/members`, { token, body: { email, role } }),
      201,
      `add ${email} as ${role}`,
    );
  }

  test('an owner of two workspaces manages the second while signed in to the first', async () => {
    const owner = await signUp(t, 'two-owner', { workspace_name: 'First' });
    const second = await secondWorkspace(owner, 'Second');
    const token = owner.tokens.access_token;
    const base = `/workspaces/${second.id}`;

    const fetched = expectStatus<WorkspaceOut>(await call(t, base, { token }), 200, 'GET second');
    assert.equal(fetched.name, 'Second');
    assert.equal(fetched.role, 'owner', 'the role of that membership');

    const patched = expectStatus<WorkspaceOut>(
      await call(t, base, {
        token,
        method: 'PATCH',
        body: { name: 'Second, renamed', settings: { access_token_ttl_seconds: 600 } },
      }),
      200,
      'PATCH second',
    );
    assert.equal(patched.name, 'Second, renamed');
    assert.equal(patched.settings.access_token_ttl_seconds, 600);

    const colleague = await registerUser(t);
    const added = await addMember(token, second.id, colleague.email, 'member');
    assert.equal(added.user_id, colleague.user.id);
    const invited = expectStatus<{ email: string; role: string }>(
      await call(t, `${base}/members`, { token, body: { email: uniqueEmail('invitee'), role: 'admin' } }),
      202,
      'invite to second',
    );
    assert.equal(invited.role, 'admin');
    const promoted = expectStatus<MemberOut>(
      await call(t, `${base}/members/${colleague.user.id}`, {
        token,
        method: 'PATCH',
        body: { role: 'admin' },
      }),
      200,
      'change role in second',
    );
    assert.equal(promoted.role, 'admin');
    const members = expectStatus<Page<MemberOut>>(await call(t, `${base}/members`, { token }), 200);
    assert.deepEqual(
      members.results.map((m) => [m.user_id, m.role]).sort(),
      [
        [owner.user.id, 'owner'],
        [colleague.user.id, 'admin'],
      ].sort(),
    );
    assert.equal(
      (await call(t, `${base}/members/${colleague.user.id}`, { token, method: 'DELETE' })).statusCode,
      204,
      'remove from second',
    );

    assert.equal((await call(t, base, { token, method: 'DELETE' })).statusCode, 204, 'delete second');
    expectError(await call(t, base, { token }), 404, 'NOT_FOUND', 'second is gone');
    const first = expectStatus<WorkspaceOut>(
      await call(t, `/workspaces/${owner.workspace.id}`, { token }),
      200,
    );
    assert.equal(first.name, 'First', 'the token’s own workspace is untouched');
  });

  test('a member signed in where it is owner may not administer a workspace where it is a member (403)', async () => {
    const other = await signUp(t, 'b-owner', { workspace_name: 'B' });
    const user = await signUp(t, 'a-owner', { workspace_name: 'A' });
    await addMember(other.tokens.access_token, other.workspace.id, user.email, 'member');
    const bystander = await registerUser(t);
    await addMember(other.tokens.access_token, other.workspace.id, bystander.email, 'member');
    // Signed in to A, where the token's role is owner.
    const token = user.tokens.access_token;
    const base = `/workspaces/${other.workspace.id}`;

    const fetched = expectStatus<WorkspaceOut>(await call(t, base, { token }), 200, 'member reads B');
    assert.equal(fetched.role, 'member');
    expectStatus(await call(t, `${base}/members`, { token }), 200, 'member lists B’s members');

    const refused: Array<[string, Parameters<typeof call>[2]]> = [
      ['PATCH B', { token, method: 'PATCH', body: { name: 'Taken over' } }],
      ['add to B', { token, body: { email: uniqueEmail('x'), role: 'member' } }],
      ['change a role in B', { token, method: 'PATCH', body: { role: 'admin' } }],
      ['remove from B', { token, method: 'DELETE' }],
      ['delete B', { token, method: 'DELETE' }],
    ];
    const paths = [
      base,
      `${base}/members`,
      `${base}/members/${bystander.user.id}`,
      `${base}/members/${bystander.user.id}`,
      base,
    ];
    for (const [i, [what, options]] of refused.entries()) {
      expectError(await call(t, paths[i] ?? base, options), 403, 'INSUFFICIENT_PERMISSIONS', what);
    }

    const b = expectStatus<WorkspaceOut>(await call(t, base, { token: other.tokens.access_token }), 200);
    assert.equal(b.name, 'B', 'B unchanged');
    const members = expectStatus<Page<MemberOut>>(
      await call(t, `${base}/members`, { token: other.tokens.access_token }),
      200,
    );
    assert.equal(members.pagination.total, 3, 'nobody added or removed');

    // Leaving is every member's own choice, whatever workspace the token names.
    assert.equal(
      (await call(t, `${base}/members/${user.user.id}`, { token, method: 'DELETE' })).statusCode,
      204,
      'member leaves B',
    );
    expectError(await call(t, base, { token }), 404, 'NOT_FOUND', 'after leaving, B is not found');
  });

  test('an admin of another workspace manages its members but cannot grant ownership there', async () => {
    const other = await signUp(t, 'c-owner');
    const user = await signUp(t, 'c-admin');
    await addMember(other.tokens.access_token, other.workspace.id, user.email, 'admin');
    const token = user.tokens.access_token;
    const newcomer = await registerUser(t);
    await addMember(token, other.workspace.id, newcomer.email, 'member');
    expectError(
      await call(t, `/workspaces/${other.workspace.id}/members/${newcomer.user.id}`, {
        token,
        method: 'PATCH',
        body: { role: 'owner' },
      }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'only an owner of that workspace grants owner',
    );
    expectError(
      await call(t, `/workspaces/${other.workspace.id}`, { token, method: 'DELETE' }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'only an owner of that workspace deletes it',
    );
  });

  test('a member of the token’s workspace administers another workspace it owns', async () => {
    const host = await signUp(t, 'd-host', { workspace_name: 'Host' });
    const user: RegisteredUser = await registerUser(t, { workspace_name: 'Own' });
    await addMember(host.tokens.access_token, host.workspace.id, user.email, 'member');
    // Signed in to Host, where the token's role is member (no workspaces:write in the token).
    const token = (await login(t, user.email, PASSWORD, { workspaceId: host.workspace.id })).access_token;
    expectError(
      await call(t, `/workspaces/${host.workspace.id}`, { token, method: 'PATCH', body: { name: 'x' } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'a member of Host',
    );
    const own = `/workspaces/${user.workspace.id}`;
    const patched = expectStatus<WorkspaceOut>(
      await call(t, own, { token, method: 'PATCH', body: { name: 'Own, renamed' } }),
      200,
      'the owner of Own',
    );
    assert.equal(patched.role, 'owner');
    const colleague = await registerUser(t);
    await addMember(token, user.workspace.id, colleague.email, 'admin');
  });

  test('a workspace the user is not a member of, and another workspace for an API key, are 404', async () => {
    const stranger = await signUp(t, 'stranger');
    const target = await signUp(t, 'target');
    const targetMember = await registerUser(t);
    await addMember(target.tokens.access_token, target.workspace.id, targetMember.email, 'member');
    const key: CreatedApiKey = await createApiKey(t, stranger.tokens.access_token, ['*']);
    const base = `/workspaces/${target.workspace.id}`;
    const attempts: Array<[string, string, Parameters<typeof call>[2]]> = [
      ['GET', base, {}],
      ['PATCH', base, { method: 'PATCH', body: { name: 'x' } }],
      ['DELETE', base, { method: 'DELETE' }],
      ['GET members', `${base}/members`, {}],
      ['POST members', `${base}/members`, { body: { email: uniqueEmail('y'), role: 'member' } }],
      [
        'PATCH member',
        `${base}/members/${targetMember.user.id}`,
        { method: 'PATCH', body: { role: 'admin' } },
      ],
      ['DELETE member', `${base}/members/${targetMember.user.id}`, { method: 'DELETE' }],
    ];
    for (const [what, path, options] of attempts) {
      const asUser = await call(t, path, { ...options, token: stranger.tokens.access_token });
      assert.deepEqual(expectError(asUser, 404, 'NOT_FOUND', `${what} as a non-member`), {
        detail: 'Workspace not found',
        error_code: 'NOT_FOUND',
      });
      if (what === 'DELETE') continue; // deleting a workspace needs a signed-in user (401 for a key)
      const asKey = await call(t, path, { ...options, apiKey: key.key });
      expectError(asKey, 404, 'NOT_FOUND', `${what} with another workspace’s API key`);
    }
    const own = expectStatus<WorkspaceOut>(
      await call(t, `/workspaces/${stranger.workspace.id}`, { apiKey: key.key }),
      200,
      'the key reaches its own workspace',
    );
    assert.equal(own.id, stranger.workspace.id);
    assert.equal(own.role, undefined, 'a key has no role');
    const unchanged = expectStatus<Page<MemberOut>>(
      await call(t, `${base}/members`, { token: target.tokens.access_token }),
      200,
    );
    assert.equal(unchanged.pagination.total, 2);
  });

  test('an API key needs workspaces:write to manage its own workspace', async () => {
    const owner = await signUp(t, 'key-owner');
    const reader = await createApiKey(t, owner.tokens.access_token, ['workspaces:read']);
    const writer = await createApiKey(t, owner.tokens.access_token, ['workspaces:write']);
    const base = `/workspaces/${owner.workspace.id}`;
    const refused = expectError(
      await call(t, base, { apiKey: reader.key, method: 'PATCH', body: { name: 'by key' } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'read-only key',
    );
    assert.equal(refused.detail, 'This action requires scope workspaces:write');
    const patched = expectStatus<WorkspaceOut>(
      await call(t, base, { apiKey: writer.key, method: 'PATCH', body: { name: 'by key' } }),
      200,
      'write key',
    );
    assert.equal(patched.name, 'by key');
  });
});
