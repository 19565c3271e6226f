/**
 * Sign-up, sign-in and session lifecycle (contract §2.1–2.2). Plain functions of the identity
 * context and input; they throw domain errors and never see HTTP.
 *
 * auth/ depends on workspaces/ and not the reverse: identity is built on memberships (sign-up
 * creates a workspace, a token carries the role of one), while workspaces/ needs of auth/ only the
 * caller's shape and the caches to drop, which it states itself (workspace-access.ts,
 * workspaces.service.ts).
 */

import { isUniqueViolation } from '../db/errors.ts';
import { withTransaction } from '../db/transaction.ts';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import { verificationEmail } from '../mail/templates.ts';
import {
  DuplicateResourceError,
  ForbiddenError,
  InvalidAuthTokenError,
  InvalidCredentialsError,
  InvalidOneTimeTokenError,
  NotFoundError,
} from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { randomToken, sha256Hex } from '../shared/random-secrets.ts';
import {
  findMembership,
  insertMember,
  insertWorkspace,
  listMemberships,
  type Membership,
  type Workspace,
} from '../workspaces/workspaces.repository.ts';
import type { IdentityContext } from './identity-context.ts';
import { consumeOneTimeToken, insertOneTimeToken } from './one-time-tokens.repository.ts';
import { dummyPasswordHash, hashPassword, verifyPassword } from './passwords.ts';
import { findSession, insertSession, revokeSession, rotateRefreshJti } from './sessions.repository.ts';
import {
  findUserByEmail,
  findUserById,
  insertUser,
  markEmailVerified,
  type User,
} from './users.repository.ts';
import { spendVerificationEmail } from './verification-mail-limit.ts';

const VERIFY_EMAIL_TTL_MS = 48 * 3600_000;

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: 'Bearer';
}

export async function register(
  ctx: IdentityContext,
  input: { email: string; password: string; name?: string | undefined; workspaceName?: string | undefined },
): Promise<{ user: User; workspace: Workspace }> {
  if (!ctx.signupEnabled) throw new ForbiddenError('Sign-up is disabled on this server');
  const passwordHash = await hashPassword(input.password, ctx.passwordHash);
  const now = ctx.clock.now();
  const userId = uuidv7();
  const workspaceId = uuidv7();
  const token = randomToken();
  const name = input.name?.trim() || null;
  const workspaceName = input.workspaceName?.trim() || `${name ?? input.email.split('@')[0]}'s workspace`;
  try {
    await withTransaction(ctx.db, async (trx) => {
      if (await findUserByEmail(trx, input.email))
        throw new DuplicateResourceError('A user with this email already exists');
      await insertUser(trx, { id: userId, email: input.email, name, passwordHash, now });
      await insertWorkspace(trx, { id: workspaceId, name: workspaceName, now });
      await insertMember(trx, { workspaceId, userId, role: 'owner', now });
      await insertOneTimeToken(trx, {
        id: uuidv7(),
        userId,
        purpose: 'verify_email',
        tokenHash: sha256Hex(token),
        expiresAt: new Date(now.getTime() + VERIFY_EMAIL_TTL_MS),
        now,
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicateResourceError('A user with this email already exists');
    throw error;
  }
  const user = await findUserById(ctx.db, userId);
  const membership = await findMembership(ctx.db, userId, workspaceId);
  if (!user || !membership) throw new Error('registered user vanished');
  await ctx.mailer.send(verificationEmail(user.email, ctx.publicUrl, token));
  return { user, workspace: membership.workspace };
}

async function openSession(ctx: IdentityContext, user: User, membership: Membership): Promise<TokenPair> {
  const sessionId = uuidv7();
  const jti = uuidv7();
  const refresh = await ctx.tokens.signRefresh({
    userId: user.id,
    workspaceId: membership.workspace.id,
    sessionId,
    jti,
  });
  await insertSession(ctx.db, {
    id: sessionId,
    userId: user.id,
    workspaceId: membership.workspace.id,
    refreshJti: jti,
    expiresAt: refresh.expiresAt,
    now: ctx.clock.now(),
  });
  const ttlSeconds = membership.workspace.accessTokenTtlSeconds;
  const access = await ctx.tokens.signAccess({
    userId: user.id,
    workspaceId: membership.workspace.id,
    role: membership.role,
    sessionId,
    ttlSeconds,
  });
  return { access_token: access, refresh_token: refresh.token, expires_in: ttlSeconds, token_type: 'Bearer' };
}

export async function login(
  ctx: IdentityContext,
  input: { email: string; password: string; workspaceId?: string | undefined },
): Promise<TokenPair> {
  const user = await findUserByEmail(ctx.db, input.email);
  // Verify against a dummy hash for unknown e-mails so timing does not reveal which exist.
  const ok = await verifyPassword(
    input.password,
    user?.passwordHash ?? (await dummyPasswordHash(ctx.passwordHash)),
  );
  if (!user || !ok) throw new InvalidCredentialsError();
  if (ctx.requireEmailVerification && !user.emailVerifiedAt)
    throw new ForbiddenError('Verify your e-mail address before signing in');
  const membership = input.workspaceId
    ? await findMembership(ctx.db, user.id, input.workspaceId)
    : (await listMemberships(ctx.db, user.id))[0];
  if (!membership) {
    if (input.workspaceId) throw new NotFoundError('Workspace');
    throw new ForbiddenError('This user belongs to no workspace');
  }
  return openSession(ctx, user, membership);
}

export async function switchWorkspace(
  ctx: IdentityContext,
  userId: string,
  workspaceId: string,
): Promise<TokenPair> {
  const user = await findUserById(ctx.db, userId);
  const membership = await findMembership(ctx.db, userId, workspaceId);
  if (!user || !membership) throw new NotFoundError('Workspace');
  return openSession(ctx, user, membership);
}

/**
 * Rotates the refresh token. Presenting one that was already rotated away is treated as theft
 * (RFC 6819 §5.2.2.3): the whole session is revoked, so both the thief and the user must sign in again.
 */
export async function refresh(ctx: IdentityContext, refreshToken: string): Promise<TokenPair> {
  const claims = await ctx.tokens.verifyRefresh(refreshToken);
  const session = await findSession(ctx.db, claims.sid);
  if (!session || session.revokedAt || session.userId !== claims.sub) throw new InvalidAuthTokenError();
  const now = ctx.clock.now();
  const revokeForReuse = async (): Promise<never> => {
    await revokeSession(ctx.db, session.id, 'refresh_token_reuse', now);
    ctx.authenticator.forgetSession(session.id);
    throw new InvalidAuthTokenError('Refresh token has already been used; the session is revoked');
  };
  if (session.refreshJti !== claims.jti) return revokeForReuse();
  const membership = await findMembership(ctx.db, session.userId, session.workspaceId);
  if (!membership) {
    await revokeSession(ctx.db, session.id, 'membership_ended', now);
    ctx.authenticator.forgetSession(session.id);
    throw new InvalidAuthTokenError();
  }
  const nextJti = uuidv7();
  const next = await ctx.tokens.signRefresh({
    userId: session.userId,
    workspaceId: session.workspaceId,
    sessionId: session.id,
    jti: nextJti,
  });
  const rotated = await rotateRefreshJti(ctx.db, {
    sessionId: session.id,
    expectedJti: claims.jti,
    nextJti,
    expiresAt: next.expiresAt,
    now,
  });
  if (!rotated) return revokeForReuse();
  const ttlSeconds = membership.workspace.accessTokenTtlSeconds;
  const access = await ctx.tokens.signAccess({
    userId: session.userId,
    workspaceId: session.workspaceId,
    role: membership.role,
    sessionId: session.id,
    ttlSeconds,
  });
  return { access_token: access, refresh_token: next.token, expires_in: ttlSeconds, token_type: 'Bearer' };
}

/**
 * Ends the session the access token names and, for a browser, the one its refresh cookie names
 * when that is the same user's (after a workspace switch in another tab the two differ): signing
 * out of the dashboard signs out of every tab.
 */
export async function logout(
  ctx: IdentityContext,
  sessionId: string,
  browser?: { userId: string; refreshToken: string | undefined },
): Promise<void> {
  const ended = [sessionId];
  if (browser?.refreshToken !== undefined) {
    const claims = await ctx.tokens.verifyRefresh(browser.refreshToken).catch(() => null);
    if (claims && claims.sub === browser.userId && claims.sid !== sessionId) ended.push(claims.sid);
  }
  for (const id of ended) {
    await revokeSession(ctx.db, id, 'logout', ctx.clock.now());
    ctx.authenticator.forgetSession(id);
  }
}

export async function verifyEmail(ctx: IdentityContext, token: string): Promise<void> {
  const now = ctx.clock.now();
  const userId = await consumeOneTimeToken(ctx.db, {
    tokenHash: sha256Hex(token),
    purpose: 'verify_email',
    now,
  });
  if (!userId) throw new InvalidOneTimeTokenError('Verification token is invalid, used or expired');
  await markEmailVerified(ctx.db, userId, now);
  ctx.authenticator.forgetUser(userId);
}

/** `budget`: the address's verification e-mails (verification-mail-limit.ts); throws its 429. */
export async function resendVerification(
  ctx: IdentityContext,
  userId: string,
  budget: RateLimiter,
): Promise<void> {
  const user = await findUserById(ctx.db, userId);
  if (!user || user.emailVerifiedAt) return;
  await spendVerificationEmail(budget, user.email);
  const token = randomToken();
  const now = ctx.clock.now();
  await insertOneTimeToken(ctx.db, {
    id: uuidv7(),
    userId,
    purpose: 'verify_email',
    tokenHash: sha256Hex(token),
    expiresAt: new Date(now.getTime() + VERIFY_EMAIL_TTL_MS),
    now,
  });
  await ctx.mailer.send(verificationEmail(user.email, ctx.publicUrl, token));
}

export interface UserProfile {
  user: User;
  memberships: Membership[];
}

export async function currentUser(ctx: IdentityContext, userId: string): Promise<UserProfile> {
  // Read through the authenticator's short cache: clients poll /auth/me, and every change to a
  // user's profile or memberships clears the entry (ADR 004).
  const profile = await ctx.authenticator.profile(userId, async () => {
    const user = await findUserById(ctx.db, userId);
    return user ? { user, memberships: await listMemberships(ctx.db, userId) } : undefined;
  });
  return existingProfile(profile);
}

function existingProfile(profile: UserProfile | undefined): UserProfile {
  if (!profile) throw new InvalidAuthTokenError();
  return profile;
}
