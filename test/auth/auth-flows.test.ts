/**
 * Identity flows end to end over HTTP (contract §2.1, §2.2, §2.4), with e-mails read from a real
 * SMTP server the app delivers to.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  decodeJwt,
  type ErrorBody,
  expectError,
  expectStatus,
  login,
  me,
  PASSWORD,
  type Page,
  randomIp,
  registerUser,
  signUp,
  startIdentityApp,
  type TokenPair,
  uniqueEmail,
  type WorkspaceOut,
} from '../helpers/identity.ts';
import { type SinkMessage, type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';

interface MemberOut {
  user_id: string;
  email: string;
  name: string | null;
  role: string;
  joined_at: string;
}

describe('identity flows over HTTP with a real SMTP server', () => {
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

  const mailTo = (email: string, subject: RegExp, except: readonly string[] = []): Promise<SinkMessage> =>
    sink.waitFor(
      (m) =>
        m.to.includes(email) && subject.test(m.subject) && m.token !== undefined && !except.includes(m.token),
    );

  const meStatus = async (token: string) => (await call(t, '/auth/me', { token })).statusCode;

  test('register → e-mailed verification → login → me → refresh rotation → reuse revokes the session → logout', async () => {
    const email = uniqueEmail('flow');
    const registered = await call(t, '/auth/register', {
      body: { email, password: PASSWORD, name: 'Flow User', workspace_name: 'Flow Inc' },
    });
    const { user, workspace } = expectStatus<{
      user: { id: string; email: string; email_verified: boolean; name: string };
      workspace: WorkspaceOut;
    }>(registered, 201, 'register');
    assert.equal(user.email, email);
    assert.equal(user.name, 'Flow User');
    assert.equal(user.email_verified, false);
    assert.equal(workspace.name, 'Flow Inc');
    assert.equal(workspace.role, 'owner');
    assert.equal(workspace.settings.access_token_ttl_seconds, 86400);

    const verification = await mailTo(email, /verify/i);
    assert.ok(verification.token, 'verification e-mail carries a token line');
    assert.ok(
      verification.html.includes(encodeURIComponent(verification.token)),
      'HTML part links the token',
    );
    const verified = await call(t, '/auth/verify-email', { body: { token: verification.token } });
    assert.deepEqual(expectStatus(verified, 200, 'verify-email'), { email_verified: true });
    expectError(
      await call(t, '/auth/verify-email', { body: { token: verification.token } }),
      400,
      'INVALID_TOKEN',
      'verification token is single-use',
    );

    const first = await login(t, email, PASSWORD);
    assert.equal(first.token_type, 'Bearer');
    assert.equal(first.expires_in, 86400);
    const profile = await me(t, first.access_token);
    assert.equal(profile.id, user.id);
    assert.equal(profile.email, email);
    assert.equal(profile.email_verified, true);
    assert.equal(profile.workspace_id, workspace.id);
    assert.equal(profile.role, 'owner');
    assert.deepEqual(profile.workspaces, [{ id: workspace.id, name: 'Flow Inc', role: 'owner' }]);

    const second = expectStatus<TokenPair>(
      await call(t, '/auth/refresh', { body: { refresh_token: first.refresh_token } }),
      200,
      'refresh',
    );
    assert.equal(second.token_type, 'Bearer');
    assert.equal(second.expires_in, 86400);
    assert.notEqual(second.refresh_token, first.refresh_token, 'refresh token rotates');
    assert.notEqual(second.access_token, first.access_token, 'a new access token');
    assert.equal(
      await meStatus(first.access_token),
      200,
      'the old access token stays valid until it expires',
    );
    assert.equal(await meStatus(second.access_token), 200);

    // Presenting the rotated-away refresh token is treated as theft: the whole session ends.
    expectError(
      await call(t, '/auth/refresh', { body: { refresh_token: first.refresh_token } }),
      401,
      undefined,
      'reused refresh token',
    );
    expectError(
      await call(t, '/auth/refresh', { body: { refresh_token: second.refresh_token } }),
      401,
      undefined,
      'newest refresh token of the revoked session',
    );
    expectError(
      await call(t, '/auth/me', { token: second.access_token }),
      401,
      undefined,
      'newest access token',
    );
    expectError(
      await call(t, '/auth/me', { token: first.access_token }),
      401,
      undefined,
      'first access token',
    );

    const third = await login(t, email, PASSWORD);
    const parallel = await login(t, email, PASSWORD);
    assert.equal(await meStatus(third.access_token), 200);
    const out = await call(t, '/auth/logout', { token: third.access_token, body: {} });
    assert.equal(out.statusCode, 204, out.body);
    assert.equal(out.body, '');
    const after = await call(t, '/auth/me', { token: third.access_token });
    assert.deepEqual(expectError(after, 401, undefined, 'access token after logout'), {
      detail: 'Invalid token',
    });
    expectError(
      await call(t, '/auth/refresh', { body: { refresh_token: third.refresh_token } }),
      401,
      undefined,
      'refresh token after logout',
    );
    assert.equal(await meStatus(parallel.access_token), 200, 'logout ends only its own session');
  });

  test('logout without a request body (how clients call it) → 204', async () => {
    const account = await signUp(t, 'bodiless');
    const out = await call(t, '/auth/logout', { method: 'POST', token: account.tokens.access_token });
    assert.equal(out.statusCode, 204, out.body);
    expectError(await call(t, '/auth/me', { token: account.tokens.access_token }), 401, undefined, 'after');
  });

  test('verify-email/resend sends a fresh token that verifies the address', async () => {
    const account = await signUp(t, 'resend');
    const original = await mailTo(account.email, /verify/i);
    const resent = await call(t, '/auth/verify-email/resend', {
      method: 'POST',
      token: account.tokens.access_token,
    });
    assert.deepEqual(expectStatus(resent, 202, 'resend'), { status: 'accepted' });
    const fresh = await mailTo(account.email, /verify/i, [original.token ?? '']);
    assert.notEqual(fresh.token, original.token);
    expectStatus(await call(t, '/auth/verify-email', { body: { token: fresh.token } }), 200, 'verify');
    assert.equal((await me(t, account.tokens.access_token)).email_verified, true);
    expectError(
      await call(t, '/auth/verify-email', { body: { token: 'not-a-token' } }),
      400,
      'INVALID_TOKEN',
      'unknown verification token',
    );
  });

  test('password reset: 202 always, e-mailed token, confirm ends every session, token single-use', async () => {
    const account = await signUp(t, 'reset');
    const otherSession = await login(t, account.email, PASSWORD);
    const unknown = uniqueEmail('nobody');

    const forUnknown = await call(t, '/auth/password-reset/request', { body: { email: unknown } });
    assert.deepEqual(expectStatus(forUnknown, 202, 'reset request for unknown e-mail'), {
      status: 'accepted',
    });
    const forKnown = await call(t, '/auth/password-reset/request', { body: { email: account.email } });
    assert.deepEqual(expectStatus(forKnown, 202, 'reset request'), { status: 'accepted' });

    const mail = await mailTo(account.email, /reset/i);
    assert.ok(mail.token);
    await t.deps.mailer.idle();
    assert.equal(sink.messagesTo(unknown).length, 0, 'no e-mail for an unknown address');
    const outbox = await t.deps.database.db
      .selectFrom('email_outbox')
      .select('id')
      .where('to_address', '=', unknown)
      .execute();
    assert.equal(outbox.length, 0, 'nothing queued for an unknown address');

    const newPassword = 'a brand new passphrase';
    const confirmed = await call(t, '/auth/password-reset/confirm', {
      body: { token: mail.token, password: newPassword },
    });
    assert.equal(confirmed.statusCode, 204, confirmed.body);

    for (const [name, pair] of [
      ['first session', account.tokens],
      ['second session', otherSession],
    ] as const) {
      expectError(await call(t, '/auth/me', { token: pair.access_token }), 401, undefined, `${name} access`);
      expectError(
        await call(t, '/auth/refresh', { body: { refresh_token: pair.refresh_token } }),
        401,
        undefined,
        `${name} refresh`,
      );
    }

    const fresh = await login(t, account.email, newPassword);
    assert.equal(await meStatus(fresh.access_token), 200);
    const oldPassword = await call(t, '/auth/login', {
      body: { email: account.email, password: PASSWORD },
      remoteAddress: randomIp(),
    });
    assert.deepEqual(expectError(oldPassword, 401, undefined, 'old password'), {
      detail: 'Invalid email or password',
    });

    expectError(
      await call(t, '/auth/password-reset/confirm', {
        body: { token: mail.token, password: 'yet another one!' },
      }),
      400,
      'INVALID_TOKEN',
      'reset token reused',
    );
    assert.equal(await meStatus(fresh.access_token), 200, 'a refused reset ends no session');
  });

  test('a reset token works for one hour and is refused after it', async () => {
    // Two users so that using one token cannot be what invalidates the other.
    const early = await signUp(t, 'expiry-a');
    const late = await signUp(t, 'expiry-b');
    for (const account of [early, late]) {
      expectStatus(await call(t, '/auth/password-reset/request', { body: { email: account.email } }), 202);
    }
    const earlyMail = await mailTo(early.email, /reset/i);
    const lateMail = await mailTo(late.email, /reset/i);

    t.clock.advance(59 * 60_000);
    const inTime = await call(t, '/auth/password-reset/confirm', {
      body: { token: earlyMail.token, password: 'changed within the hour' },
    });
    assert.equal(inTime.statusCode, 204, `a 59-minute-old token still works: ${inTime.body}`);
    await login(t, early.email, 'changed within the hour');

    t.clock.advance(60_000 + 1000);
    const expired = await call(t, '/auth/password-reset/confirm', {
      body: { token: lateMail.token, password: 'changed after the hour' },
    });
    expectError(expired, 400, 'INVALID_TOKEN', 'reset token older than 1 h');
    await login(t, late.email, PASSWORD);
  });

  test('registering an e-mail twice (in any letter case) → 400 DUPLICATE_RESOURCE', async () => {
    const account = await registerUser(t);
    for (const email of [account.email, account.email.toUpperCase()]) {
      const again = await call(t, '/auth/register', { body: { email, password: PASSWORD } });
      expectError(again, 400, 'DUPLICATE_RESOURCE', `register ${email} again`);
    }
  });

  test('wrong password and unknown e-mail get the same 401 body', async () => {
    const account = await registerUser(t);
    const wrong = await call(t, '/auth/login', {
      body: { email: account.email, password: 'not the password' },
      remoteAddress: randomIp(),
    });
    const unknown = await call(t, '/auth/login', {
      body: { email: uniqueEmail('ghost'), password: PASSWORD },
      remoteAddress: randomIp(),
    });
    const expected: ErrorBody = { detail: 'Invalid email or password' };
    assert.deepEqual(expectError(wrong, 401, undefined, 'wrong password'), expected);
    assert.deepEqual(expectError(unknown, 401, undefined, 'unknown e-mail'), expected);
    assert.equal(wrong.body, unknown.body);
  });

  test('switch-workspace: a token pair for a workspace the user belongs to; 404 for others', async () => {
    const account = await signUp(t, 'switch', { workspace_name: 'Home' });
    const stranger = await signUp(t, 'stranger');
    const created = expectStatus<WorkspaceOut>(
      await call(t, '/workspaces', { token: account.tokens.access_token, body: { name: 'Second' } }),
      201,
      'create workspace',
    );
    assert.equal(created.name, 'Second');
    assert.equal(created.role, 'owner');

    const switched = expectStatus<TokenPair>(
      await call(t, '/auth/switch-workspace', {
        token: account.tokens.access_token,
        body: { workspace_id: created.id },
      }),
      200,
      'switch',
    );
    assert.equal(switched.token_type, 'Bearer');
    const there = await me(t, switched.access_token);
    assert.equal(there.workspace_id, created.id);
    assert.equal(there.role, 'owner');
    assert.deepEqual(there.workspaces.map((w) => w.id).sort(), [account.workspace.id, created.id].sort());
    assert.equal((await me(t, account.tokens.access_token)).workspace_id, account.workspace.id);

    for (const workspaceId of [stranger.workspace.id, randomUUID()]) {
      const refused = await call(t, '/auth/switch-workspace', {
        token: account.tokens.access_token,
        body: { workspace_id: workspaceId },
      });
      expectError(refused, 404, 'NOT_FOUND', `switch to ${workspaceId}`);
    }
  });

  test('invitations: unknown e-mail → 202 + e-mail; accepted after registration; existing user → 201', async () => {
    const owner = await signUp(t, 'inviter', { workspace_name: 'Inviting Co' });
    const inviteeEmail = uniqueEmail('invitee');
    const invited = await call(t, `/workspaces/${owner.workspace.id}/members`, {
      token: owner.tokens.access_token,
      body: { email: inviteeEmail, role: 'admin' },
    });
    const invitation = expectStatus<{ id: string; email: string; role: string; expires_at: string }>(
      invited,
      202,
      'invite',
    );
    assert.equal(invitation.email, inviteeEmail);
    assert.equal(invitation.role, 'admin');
    assert.equal(invitation.expires_at, new Date(t.clock.now().getTime() + 7 * 86_400_000).toISOString());
    const mail = await mailTo(inviteeEmail, /invited/i);
    assert.match(mail.subject, /Inviting Co/);
    assert.ok(mail.token);

    // Someone else holding the token cannot use it, and the failed attempt does not consume it.
    const interloper = await signUp(t, 'interloper');
    expectError(
      await call(t, '/workspaces/invitations/accept', {
        token: interloper.tokens.access_token,
        body: { token: mail.token },
      }),
      400,
      'INVALID_TOKEN',
      'accept as another user',
    );

    const invitee = await registerUser(t, { email: inviteeEmail });
    const inviteeTokens = await login(t, inviteeEmail, PASSWORD);
    const accepted = await call(t, '/workspaces/invitations/accept', {
      token: inviteeTokens.access_token,
      body: { token: mail.token },
    });
    const joined = expectStatus<WorkspaceOut>(accepted, 200, 'accept');
    assert.equal(joined.id, owner.workspace.id);
    assert.equal(joined.role, 'admin');
    const inviteeMe = await me(t, inviteeTokens.access_token);
    assert.ok(inviteeMe.workspaces.some((w) => w.id === owner.workspace.id && w.role === 'admin'));
    const members = expectStatus<Page<MemberOut>>(
      await call(t, `/workspaces/${owner.workspace.id}/members`, { token: owner.tokens.access_token }),
      200,
      'members',
    );
    const listed = members.results.find((m) => m.user_id === invitee.user.id);
    assert.equal(listed?.role, 'admin');
    assert.equal(listed?.email, inviteeEmail);
    expectError(
      await call(t, '/workspaces/invitations/accept', {
        token: inviteeTokens.access_token,
        body: { token: mail.token },
      }),
      400,
      'INVALID_TOKEN',
      'invitation token reused',
    );

    const existing = await registerUser(t, { name: 'Existing Person' });
    const added = await call(t, `/workspaces/${owner.workspace.id}/members`, {
      token: owner.tokens.access_token,
      body: { email: existing.email, role: 'member' },
    });
    const member = expectStatus<MemberOut>(added, 201, 'add existing user');
    assert.equal(member.user_id, existing.user.id);
    assert.equal(member.email, existing.email);
    assert.equal(member.name, 'Existing Person');
    assert.equal(member.role, 'member');
    const memberTokens = await login(t, existing.email, PASSWORD, { workspaceId: owner.workspace.id });
    assert.equal((await me(t, memberTokens.access_token)).role, 'member');
    expectError(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email: existing.email, role: 'member' },
      }),
      400,
      'DUPLICATE_RESOURCE',
      'add the same user twice',
    );
  });

  test('an invitation expires after 7 days (400 INVALID_TOKEN)', async () => {
    const owner = await signUp(t, 'slowinviter');
    const inviteeEmail = uniqueEmail('late');
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email: inviteeEmail, role: 'member' },
      }),
      202,
    );
    const mail = await mailTo(inviteeEmail, /invited/i);
    t.clock.advance(7 * 86_400_000 + 1000);
    await registerUser(t, { email: inviteeEmail });
    const tokens = await login(t, inviteeEmail, PASSWORD);
    expectError(
      await call(t, '/workspaces/invitations/accept', {
        token: tokens.access_token,
        body: { token: mail.token },
      }),
      400,
      'INVALID_TOKEN',
      'accept after 7 days',
    );
    assert.equal((await me(t, tokens.access_token)).workspaces.length, 1, 'only the invitee’s own workspace');
  });

  test('a member removed from the workspace loses access at once; login into a foreign workspace → 404', async () => {
    const owner = await signUp(t, 'remover');
    const member = await registerUser(t);
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email: member.email, role: 'member' },
      }),
      201,
    );
    const tokens = await login(t, member.email, PASSWORD, { workspaceId: owner.workspace.id });
    assert.equal(await meStatus(tokens.access_token), 200);
    const removed = await call(t, `/workspaces/${owner.workspace.id}/members/${member.user.id}`, {
      method: 'DELETE',
      token: owner.tokens.access_token,
    });
    assert.equal(removed.statusCode, 204, removed.body);
    expectError(
      await call(t, '/auth/me', { token: tokens.access_token }),
      401,
      undefined,
      'removed member access',
    );
    expectError(
      await call(t, '/auth/refresh', { body: { refresh_token: tokens.refresh_token } }),
      401,
      undefined,
      'removed member refresh',
    );
    const foreign = await call(t, '/auth/login', {
      body: { email: member.email, password: PASSWORD, workspace_id: owner.workspace.id },
      remoteAddress: randomIp(),
    });
    expectError(foreign, 404, 'NOT_FOUND', 'login into a workspace the user left');
    await login(t, member.email, PASSWORD, { workspaceId: member.workspace.id });
  });

  test('the last owner can neither be demoted nor leave (400); with a second owner it can', async () => {
    const owner = await signUp(t, 'lastowner');
    const self = `/workspaces/${owner.workspace.id}/members/${owner.user.id}`;
    expectError(
      await call(t, self, { method: 'PATCH', token: owner.tokens.access_token, body: { role: 'admin' } }),
      400,
      undefined,
      'demote the last owner',
    );
    expectError(
      await call(t, self, { method: 'DELETE', token: owner.tokens.access_token }),
      400,
      undefined,
      'leave',
    );
    assert.equal((await me(t, owner.tokens.access_token)).role, 'owner', 'still the owner');

    const second = await registerUser(t);
    expectStatus(
      await call(t, `/workspaces/${owner.workspace.id}/members`, {
        token: owner.tokens.access_token,
        body: { email: second.email, role: 'owner' },
      }),
      201,
      'add a second owner',
    );
    const demoted = await call(t, self, {
      method: 'PATCH',
      token: owner.tokens.access_token,
      body: { role: 'admin' },
    });
    assert.equal(expectStatus<MemberOut>(demoted, 200, 'demote with another owner').role, 'admin');
    assert.equal((await me(t, owner.tokens.access_token)).role, 'admin', 'the session sees the new role');
  });

  test('access_token_ttl_seconds of the workspace sets expires_in (and exp) of the next login', async () => {
    const owner = await signUp(t, 'ttl');
    assert.equal(owner.tokens.expires_in, 86400);
    const tooShort = await call(t, `/workspaces/${owner.workspace.id}`, {
      method: 'PATCH',
      token: owner.tokens.access_token,
      body: { settings: { access_token_ttl_seconds: 299 } },
    });
    const issue = (
      expectError(tooShort, 422, 'VALIDATION_ERROR', 'ttl below 300').detail as Array<{
        loc: unknown[];
      }>
    )[0];
    assert.deepEqual(issue?.loc, ['body', 'settings', 'access_token_ttl_seconds']);

    const patched = await call(t, `/workspaces/${owner.workspace.id}`, {
      method: 'PATCH',
      token: owner.tokens.access_token,
      body: { settings: { access_token_ttl_seconds: 600 } },
    });
    assert.equal(
      expectStatus<WorkspaceOut>(patched, 200, 'patch ttl').settings.access_token_ttl_seconds,
      600,
    );

    const next = await login(t, owner.email, PASSWORD);
    assert.equal(next.expires_in, 600);
    const { payload } = decodeJwt(next.access_token);
    assert.equal(Number(payload.exp) - Number(payload.iat), 600);
    const refreshed = expectStatus<TokenPair>(
      await call(t, '/auth/refresh', { body: { refresh_token: next.refresh_token } }),
      200,
    );
    assert.equal(refreshed.expires_in, 600, 'refresh uses the workspace lifetime too');

    t.clock.advance(601_000);
    expectError(await call(t, '/auth/me', { token: next.access_token }), 401, 'TOKEN_EXPIRED', '600 s token');
    assert.equal(await meStatus(owner.tokens.access_token), 200, 'the earlier 24 h token is unaffected');
  });
});

describe('sign-up switches (SIGNUP_ENABLED, REQUIRE_EMAIL_VERIFICATION)', () => {
  test('SIGNUP_ENABLED=false refuses registration with 403', async () => {
    const t = await startIdentityApp({ env: { SIGNUP_ENABLED: 'false' } });
    try {
      const res = await call(t, '/auth/register', {
        body: { email: uniqueEmail('closed'), password: PASSWORD },
      });
      expectError(res, 403, undefined, 'register with sign-up disabled');
    } finally {
      await t.close();
    }
  });

  test('REQUIRE_EMAIL_VERIFICATION=true refuses login (403) until the e-mailed token is used', async () => {
    const sink = await startSmtpSink();
    const t = await startIdentityApp({ env: { SMTP_URL: sink.url, REQUIRE_EMAIL_VERIFICATION: 'true' } });
    try {
      const account = await registerUser(t);
      const refused = await call(t, '/auth/login', {
        body: { email: account.email, password: PASSWORD },
        remoteAddress: randomIp(),
      });
      expectError(refused, 403, undefined, 'login before verification');
      const wrong = await call(t, '/auth/login', {
        body: { email: account.email, password: 'not the password' },
        remoteAddress: randomIp(),
      });
      assert.deepEqual(expectError(wrong, 401, undefined, 'wrong password, unverified'), {
        detail: 'Invalid email or password',
      });
      const mail = await sink.waitFor((m) => m.to.includes(account.email) && m.token !== undefined);
      expectStatus(await call(t, '/auth/verify-email', { body: { token: mail.token } }), 200, 'verify');
      await login(t, account.email, PASSWORD);
    } finally {
      await t.close();
      await sink.close();
    }
  });
});
