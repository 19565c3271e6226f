/**
 * Pending invitations (contract §2.4): list, resend (a new token and expiry; the old link stops
 * working), revoke (the link then fails as an invalid token), with the e-mails read from a real SMTP
 * server the app delivers to.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  createApiKey,
  expectError,
  expectStatus,
  login,
  me,
  PASSWORD,
  type Page,
  registerUser,
  type SignedUpUser,
  signUp,
  startIdentityApp,
  uniqueEmail,
} from '../helpers/identity.ts';
import { type SinkMessage, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

interface InvitationOut {
  id: string;
  email: string;
  role: string;
  invited_by: { user_id: string; email: string; name: string | null } | null;
  created_at: string;
  expires_at: string;
}

const WEEK_MS = 7 * 86_400_000;

describe('pending invitations: list, resend, revoke', () => {
  let sink: SmtpSink;
  let t: TestApp;

  before(async () => {
    sink = await startSmtpSink();
    t = await startIdentityApp({ env: { SMTP_URL: sink.url } });
  });
  after(async () => {
    await t?.close();
    await sink?.close();
  });

  /** The next invitation e-mail to `email` whose token is not among `seen`. */
  const invitationMail = (email: string, seen: readonly string[] = []): Promise<SinkMessage> =>
    sink.waitFor(
      (m) =>
        m.to.includes(email) &&
        /invited/i.test(m.subject) &&
        m.token !== undefined &&
        !seen.includes(m.token),
    );

  async function invite(owner: SignedUpUser, email: string, role = 'member'): Promise<InvitationOut> {
    return expectStatus<InvitationOut>(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email, role },
      }),
      202,
      `invite ${email}`,
    );
  }

  const pending = async (owner: SignedUpUser, query: Record<string, string> = {}) =>
    expectStatus<Page<InvitationOut>>(
      await call(t, `/workspaces/${owner.workspace.id}/invitations`, {
        token: owner.tokens.access_token,
        query,
      }),
      200,
      'list invitations',
    );

  /** Registers `email` and tries to accept `token` as that user. */
  async function acceptAs(email: string, token: string | undefined) {
    await registerUser(t, { email });
    const tokens = await login(t, email, PASSWORD);
    const res = await call(t, '/workspaces/invitations/accept', {
      token: tokens.access_token,
      body: { token },
    });
    return { res, tokens };
  }

  test('the list shows who invited whom, newest first, paginated; accepted ones leave it', async () => {
    const owner = await signUp(t, 'lister', { name: 'Lister' });
    const first = uniqueEmail('first');
    const second = uniqueEmail('second');
    const third = uniqueEmail('third');
    const sent = await invite(owner, first, 'admin');
    assert.deepEqual(sent.invited_by, { user_id: owner.user.id, email: owner.email, name: 'Lister' });
    assert.equal(sent.created_at, t.clock.now().toISOString());
    t.clock.advance(1000);
    await invite(owner, second);
    t.clock.advance(1000);
    await invite(owner, third);

    const page1 = await pending(owner, { limit: '2' });
    assert.deepEqual(
      page1.results.map((i) => i.email),
      [third, second],
    );
    assert.deepEqual(page1.pagination, { total: 3, limit: 2, offset: 0, has_more: true });
    const page2 = await pending(owner, { limit: '2', offset: '2' });
    assert.deepEqual(page2.results, [sent]);

    const mail = await invitationMail(first);
    const { res } = await acceptAs(first, mail.token);
    expectStatus(res, 200, 'accept');
    assert.deepEqual(
      (await pending(owner)).results.map((i) => i.email),
      [third, second],
      'the accepted invitation is no longer pending',
    );
    expectError(
      await call(t, `/workspaces/${owner.workspace.id}/invitations/${sent.id}/resend`, {
        token: owner.tokens.access_token,
        method: 'POST',
      }),
      404,
      'NOT_FOUND',
      'resend an accepted invitation',
    );
  });

  test('resend mails a new token with a fresh expiry; the first link no longer works, the second does', async () => {
    const owner = await signUp(t, 'resender', { workspace_name: 'Resend Co' });
    const email = uniqueEmail('resent');
    const sent = await invite(owner, email);
    const firstMail = await invitationMail(email);
    t.clock.advance(3 * 3_600_000);
    const resent = expectStatus<InvitationOut>(
      await call(t, `/workspaces/${owner.workspace.id}/invitations/${sent.id}/resend`, {
        token: owner.tokens.access_token,
        method: 'POST',
      }),
      200,
      'resend',
    );
    assert.deepEqual(resent, {
      ...sent,
      expires_at: new Date(t.clock.now().getTime() + WEEK_MS).toISOString(),
    });
    assert.deepEqual((await pending(owner)).results, [resent], 'the list shows the new expiry');
    const secondMail = await invitationMail(email, [firstMail.token ?? '']);
    assert.notEqual(secondMail.token, firstMail.token);
    assert.match(secondMail.subject, /Resend Co/);
    assert.match(secondMail.text, /accept-invitation\?token=/);

    const { res: stale, tokens } = await acceptAs(email, firstMail.token);
    const error = expectError(stale, 400, 'INVALID_TOKEN', 'the first link after a resend');
    assert.equal(error.detail, 'Invitation token is invalid, used or expired');
    expectStatus(
      await call(t, '/workspaces/invitations/accept', {
        token: tokens.access_token,
        body: { token: secondMail.token },
      }),
      200,
      'the second link',
    );
    const joined = (await me(t, tokens.access_token)).workspaces.find((w) => w.id === owner.workspace.id);
    assert.equal(joined?.role, 'member');
  });

  test('revoke: 204, gone from the list, its link fails as an invalid token; twice → 404', async () => {
    const owner = await signUp(t, 'revoker');
    const email = uniqueEmail('revoked');
    const sent = await invite(owner, email);
    const mail = await invitationMail(email);
    const path = `/workspaces/${owner.workspace.id}/invitations/${sent.id}`;
    expectStatus(await call(t, path, { token: owner.tokens.access_token, method: 'DELETE' }), 204, 'revoke');
    assert.deepEqual((await pending(owner)).results, []);
    const { res, tokens } = await acceptAs(email, mail.token);
    const error = expectError(res, 400, 'INVALID_TOKEN', 'a revoked invitation’s link');
    assert.equal(error.detail, 'Invitation token is invalid, used or expired');
    assert.equal((await me(t, tokens.access_token)).workspaces.length, 1, 'only the invitee’s own workspace');
    expectError(
      await call(t, path, { token: owner.tokens.access_token, method: 'DELETE' }),
      404,
      'NOT_FOUND',
      'revoke twice',
    );
  });

  test('roles: a member may not see or manage invitations; an admin may, except resending an owner invitation', async () => {
    const owner = await signUp(t, 'roles');
    const invited = await invite(owner, uniqueEmail('future-owner'), 'owner');
    const memberInvitation = await invite(owner, uniqueEmail('future-member'));
    const signedInAs = async (role: string) => {
      const user = await registerUser(t);
      expectStatus(
        await call(t, `/workspaces/${owner.workspace.id}/members`, {
          token: owner.tokens.access_token,
          body: { email: user.email, role },
        }),
        201,
        `add ${role}`,
      );
      return (await login(t, user.email, PASSWORD, { workspaceId: owner.workspace.id })).access_token;
    };
    const member = await signedInAs('member');
    const admin = await signedInAs('admin');
    const base = `/workspaces/${owner.workspace.id}/invitations`;
    for (const [what, path, method] of [
      ['list', base, 'GET'],
      ['resend', `${base}/${memberInvitation.id}/resend`, 'POST'],
      ['revoke', `${base}/${memberInvitation.id}`, 'DELETE'],
    ] as const) {
      const body = expectError(
        await call(t, path, { token: member, method }),
        403,
        'INSUFFICIENT_PERMISSIONS',
        `${what} as a member`,
      );
      assert.equal(body.detail, 'This action requires the owner or admin role');
    }
    expectStatus(await call(t, base, { token: admin }), 200, 'an admin lists');
    const refused = expectError(
      await call(t, `${base}/${invited.id}/resend`, { token: admin, method: 'POST' }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'an admin resends an owner invitation',
    );
    assert.equal(refused.detail, 'Only an owner can grant or change the owner role');
    expectStatus(
      await call(t, `${base}/${memberInvitation.id}/resend`, { token: admin, method: 'POST' }),
      200,
      'an admin resends a member invitation',
    );
    expectStatus(
      await call(t, `${base}/${invited.id}`, { token: admin, method: 'DELETE' }),
      204,
      'an admin revokes an owner invitation',
    );
  });

  test('an API key: workspaces:read lists (invited_by null for its own), workspaces:write resends and revokes', async () => {
    const owner = await signUp(t, 'keyholder');
    const reader = await createApiKey(t, owner.tokens.access_token, ['workspaces:read']);
    const writer = await createApiKey(t, owner.tokens.access_token, ['workspaces:write']);
    const email = uniqueEmail('by-key');
    const sent = expectStatus<InvitationOut>(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        apiKey: writer.key,
        body: { email, role: 'member' },
      }),
      202,
      'a key invites',
    );
    assert.equal(sent.invited_by, null);
    const base = `/workspaces/${owner.workspace.id}/invitations`;
    const listed = expectStatus<Page<InvitationOut>>(await call(t, base, { apiKey: reader.key }), 200);
    assert.deepEqual(listed.results, [sent]);
    expectError(
      await call(t, `${base}/${sent.id}/resend`, { apiKey: reader.key, method: 'POST' }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'resend with workspaces:read',
    );
    expectStatus(await call(t, `${base}/${sent.id}/resend`, { apiKey: writer.key, method: 'POST' }), 200);
    expectStatus(await call(t, `${base}/${sent.id}`, { apiKey: writer.key, method: 'DELETE' }), 204);
  });

  test('an expired invitation stays listed and a resend makes its new link work', async () => {
    const owner = await signUp(t, 'late-resender');
    const email = uniqueEmail('late');
    const sent = await invite(owner, email);
    const firstMail = await invitationMail(email);
    t.clock.advance(WEEK_MS + 60_000);
    // The owner's access token has expired with the week: sign in again.
    const token = (await login(t, owner.email, PASSWORD)).access_token;
    const listed = expectStatus<Page<InvitationOut>>(
      await call(t, `/workspaces/${owner.workspace.id}/invitations`, { token }),
      200,
    );
    assert.deepEqual(listed.results, [sent], 'still listed, its expiry in the past');
    assert.ok(Date.parse(sent.expires_at) < t.clock.now().getTime());
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/invitations/${sent.id}/resend`, {
        token,
        method: 'POST',
      }),
      200,
      'resend an expired invitation',
    );
    const secondMail = await invitationMail(email, [firstMail.token ?? '']);
    const { res } = await acceptAs(email, secondMail.token);
    expectStatus(res, 200, 'accept the resent invitation');
  });
});

describe('an invitation without SMTP: the link is in the answer', () => {
  let t: TestApp;
  let sink: SmtpSink;
  let mailed: TestApp;

  before(async () => {
    sink = await startSmtpSink();
    [t, mailed] = await Promise.all([startIdentityApp(), startIdentityApp({ env: { SMTP_URL: sink.url } })]);
  });
  after(async () => {
    await t?.close();
    await mailed?.close();
    await sink?.close();
  });

  const invite = async (app: TestApp, owner: SignedUpUser, email: string) =>
    expectStatus<InvitationOut & { accept_url?: string }>(
      await call(app, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email, role: 'member' },
      }),
      202,
      `invite ${email}`,
    );

  test('no e-mail can go out: accept_url is answered, and its token joins the workspace', async () => {
    const owner = await signUp(t, 'no-smtp-owner');
    const email = uniqueEmail('no-smtp-invitee');
    const sent = await invite(t, owner, email);
    assert.ok(sent.accept_url, 'accept_url answered');
    const url = new URL(sent.accept_url);
    assert.equal(url.pathname, '/accept-invitation');
    const token = url.searchParams.get('token') ?? '';
    await registerUser(t, { email });
    const tokens = await login(t, email, PASSWORD);
    expectStatus(
      await call(t, '/workspaces/invitations/accept', { token: tokens.access_token, body: { token } }),
      200,
      'accept with the answered link',
    );
    const joined = await me(t, tokens.access_token);
    assert.ok(joined.workspaces.some((w) => w.id === owner.workspace.id && w.role === 'member'));
    // The link is not kept: the list of pending invitations never shows one.
    const listed = expectStatus<Page<Record<string, unknown>>>(
      await call(t, `/workspaces/${owner.workspace.id}/invitations`, { token: owner.tokens.access_token }),
      200,
    );
    assert.ok(listed.results.every((i) => !('accept_url' in i)));
  });

  test('with SMTP the link goes to the invitee alone: no accept_url in the answer', async () => {
    const owner = await signUp(mailed, 'smtp-owner');
    const email = uniqueEmail('smtp-invitee');
    const sent = await invite(mailed, owner, email);
    assert.equal(sent.accept_url, undefined);
    await sink.waitFor((m) => m.to.includes(email) && m.token !== undefined);
  });
});
