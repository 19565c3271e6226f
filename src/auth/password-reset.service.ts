/**
 * Password reset (contract §2.1): a single-use token valid for one hour, e-mailed to the account;
 * confirming it sets the new password, ends every session of the user and uses up every other reset
 * token of the user still outstanding, all in one transaction. Sending runs after the
 * request was answered (password-reset-requests.ts), so nothing here shapes that answer.
 */
import { withTransaction } from '../db/transaction.ts';
import { passwordResetEmail } from '../mail/templates.ts';
import { InvalidOneTimeTokenError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { randomToken, sha256Hex } from '../shared/random-secrets.ts';
import type { IdentityContext } from './identity-context.ts';
import { consumeOneTimeToken, insertOneTimeToken, useUpOneTimeTokens } from './one-time-tokens.repository.ts';
import { hashPassword } from './passwords.ts';
import { revokeUserSessions } from './sessions.repository.ts';
import { findUserByEmail, updatePasswordHash } from './users.repository.ts';

const PASSWORD_RESET_TTL_MS = 3600_000;

/** E-mails a reset token when `email` belongs to an account; does nothing otherwise. */
export async function sendPasswordReset(
  ctx: IdentityContext,
  email: string,
  requestedAt: Date,
): Promise<void> {
  const user = await findUserByEmail(ctx.db, email);
  if (!user) return;
  const token = randomToken();
  await insertOneTimeToken(ctx.db, {
    id: uuidv7(),
    userId: user.id,
    purpose: 'password_reset',
    tokenHash: sha256Hex(token),
    expiresAt: new Date(requestedAt.getTime() + PASSWORD_RESET_TTL_MS),
    now: requestedAt,
  });
  await ctx.mailer.send(passwordResetEmail(user.email, ctx.publicUrl, token));
}

/** Sets the new password, ends every session of the user at once and voids its other reset links. */
export async function confirmPasswordReset(
  ctx: IdentityContext,
  token: string,
  password: string,
): Promise<void> {
  const passwordHash = await hashPassword(password, ctx.passwordHash);
  const now = ctx.clock.now();
  const sessionIds = await withTransaction(ctx.db, async (trx) => {
    const userId = await consumeOneTimeToken(trx, {
      tokenHash: sha256Hex(token),
      purpose: 'password_reset',
      now,
    });
    if (!userId) throw new InvalidOneTimeTokenError('Reset token is invalid, used or expired');
    await updatePasswordHash(trx, userId, passwordHash, now);
    await useUpOneTimeTokens(trx, { userId, purpose: 'password_reset', now });
    return revokeUserSessions(trx, userId, 'password_reset', now);
  });
  for (const id of sessionIds) ctx.authenticator.forgetSession(id);
}
