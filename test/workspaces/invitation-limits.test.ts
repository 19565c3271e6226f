/**
 * No address can be flooded with invitation e-mails (contract §2.1): at most 3 resends per address
 * per hour, and at most 3 new invitations per address per hour, whichever workspace sends them.
 * Beyond: 429 RATE_LIMIT_EXCEEDED with an honest Retry-After, nothing changed and nothing sent.
 * Time moves on the app's ManualClock; e-mails are read from the outbox.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  expectError,
  expectStatus,
  login,
  PASSWORD,
  type Page,
  registerUser,
  type SignedUpUser,
  signUp,
  startIdentityApp,
  uniqueEmail,
} from '../helpers/identity.ts';

interface InvitationOut {
  id: string;
  email: string;
  expires_at: string;
}

const HOUR_S = 3600;

function expectRateLimited(res: LightMyRequestResponse, what: string): number {
  const body = expectError(res, 429, 'RATE_LIMIT_EXCEEDED', what);
  assert.deepEqual(body.details, { limit: 3, period_seconds: HOUR_S }, `${what}: details`);
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^\d+$/, `${what}: Retry-After is whole seconds`);
  assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= HOUR_S, `${what}: Retry-After ${retryAfter}`);
  return Number(retryAfter);
}

describe('invitation e-mail limits', () => {
  let t: TestApp;
  let owner: SignedUpUser;

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'inviter');
  });
  after(async () => t?.close());

  function alignClock(): number {
    t.clock.set(Math.ceil(t.clock.now().getTime() / 1000) * 1000);
    return t.clock.now().getTime();
  }

  const invite = (by: SignedUpUser, email: string) =>
    call(t, `/workspaces/${by.workspace.id}/members`, {
      token: by.tokens.access_token,
      body: { email, role: 'member' },
    });

  const resend = (invitation: InvitationOut) =>
    call(t, `/workspaces/${owner.workspace.id}/invitations/${invitation.id}/resend`, {
      token: owner.tokens.access_token,
      body: {},
    });

  const revoke = async (by: SignedUpUser, invitation: InvitationOut) =>
    expectStatus(
      await call(t, `/workspaces/${by.workspace.id}/invitations/${invitation.id}`, {
        method: 'DELETE',
        token: by.tokens.access_token,
      }),
      204,
      'revoke',
    );

  /** The invitation tokens e-mailed to `email`, oldest first. */
  async function invitationTokens(email: string): Promise<string[]> {
    await t.deps.mailer.idle();
    const rows = await t.deps.database.db
      .selectFrom('email_outbox')
      .select(['text_body', 'created_at'])
      .where('to_address', '=', email)
      .orderBy('created_at')
      .execute();
    return rows.flatMap((row) => /Your invitation token: (\S+)/.exec(row.text_body)?.[1] ?? []);
  }

  test('the 4th resend in an hour → 429 with Retry-After; the invitation and its link stay as they were; after the hour, allowed again', async () => {
    const email = uniqueEmail('resent');
    const invitation = expectStatus<InvitationOut>(await invite(owner, email), 202, 'invite');
    const t0 = alignClock();
    let last = invitation;
    for (let i = 1; i <= 3; i++) {
      last = expectStatus<InvitationOut>(await resend(invitation), 200, `resend ${i}`);
      t.clock.advance(1000);
    }
    assert.equal((await invitationTokens(email)).length, 4, 'the invitation and 3 resends');

    t.clock.set(t0 + 10_000);
    assert.equal(expectRateLimited(await resend(invitation), '4th resend'), HOUR_S - 10);
    const tokens = await invitationTokens(email);
    assert.equal(tokens.length, 4, 'the refusal sent nothing');
    const listed = expectStatus<Page<InvitationOut>>(
      await call(t, `/workspaces/${owner.workspace.id}/invitations`, { token: owner.tokens.access_token }),
      200,
    ).results.find((i) => i.id === invitation.id);
    assert.equal(listed?.expires_at, last.expires_at, 'the refused resend renewed nothing');

    t.clock.set(t0 + (HOUR_S - 1) * 1000);
    assert.equal(expectRateLimited(await resend(invitation), 'a second early'), 1);
    t.clock.set(t0 + HOUR_S * 1000);
    expectStatus(await resend(invitation), 200, 'an hour after the first resend');

    // The newest link is the one that works.
    const newest = (await invitationTokens(email)).at(-1);
    const invitee = await registerUser(t, { email });
    const tokensOfInvitee = await login(t, invitee.email, PASSWORD);
    expectStatus(
      await call(t, '/workspaces/invitations/accept', {
        token: tokensOfInvitee.access_token,
        body: { token: newest },
      }),
      200,
      'accept with the newest link',
    );
  });

  test('resends are counted per address: another address has its own budget', async () => {
    const busy = expectStatus<InvitationOut>(await invite(owner, uniqueEmail('busy')), 202);
    const calm = expectStatus<InvitationOut>(await invite(owner, uniqueEmail('calm')), 202);
    for (let i = 1; i <= 3; i++) expectStatus(await resend(busy), 200, `busy resend ${i}`);
    expectRateLimited(await resend(busy), 'busy 4th resend');
    expectStatus(await resend(calm), 200, 'another address');
  });

  test('new invitations to one address: 3 an hour, from any workspace; the 4th → 429 and creates nothing', async () => {
    const email = uniqueEmail('invited-often');
    const other = await signUp(t, 'other-inviter');
    const first = expectStatus<InvitationOut>(await invite(owner, email), 202, 'invitation 1');
    await revoke(owner, first);
    const second = expectStatus<InvitationOut>(
      await invite(owner, email),
      202,
      'invitation 2 after revoking',
    );
    await revoke(owner, second);
    expectStatus(await invite(other, email), 202, 'invitation 3 from another workspace');
    expectRateLimited(await invite(owner, email), '4th invitation');
    const pending = expectStatus<Page<InvitationOut>>(
      await call(t, `/workspaces/${owner.workspace.id}/invitations`, {
        token: owner.tokens.access_token,
        query: { limit: '200' },
      }),
      200,
    ).results.filter((i) => i.email === email);
    assert.equal(pending.length, 0, 'nothing was created');
    assert.equal((await invitationTokens(email)).length, 3);

    // Adding someone who already has an account sends no invitation e-mail and is not limited.
    const existing = await registerUser(t);
    for (const by of [owner, other])
      expectStatus(
        await call(t, `/workspaces/${by.workspace.id}/members`, {
          token: by.tokens.access_token,
          body: { email: existing.email, role: 'member' },
        }),
        201,
      );
  });
});
