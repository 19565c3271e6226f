/** SQL for single-use e-mail verification and password-reset tokens (stored as SHA-256). */
import type { Executor } from '../db/transaction.ts';
import type { OneTimeTokenPurpose } from './auth.tables.ts';

export async function insertOneTimeToken(
  db: Executor,
  t: {
    id: string;
    userId: string;
    purpose: OneTimeTokenPurpose;
    tokenHash: string;
    expiresAt: Date;
    now: Date;
  },
): Promise<void> {
  await db
    .insertInto('one_time_tokens')
    .values({
      id: t.id,
      user_id: t.userId,
      purpose: t.purpose,
      token_hash: t.tokenHash,
      expires_at: t.expiresAt,
      used_at: null,
      created_at: t.now,
    })
    .execute();
}

/**
 * Marks an unused, unexpired token of that purpose as used and returns its user. The conditional
 * update is the single-use guarantee: two concurrent confirmations cannot both succeed.
 */
export async function consumeOneTimeToken(
  db: Executor,
  input: { tokenHash: string; purpose: OneTimeTokenPurpose; now: Date },
): Promise<string | undefined> {
  const row = await db
    .updateTable('one_time_tokens')
    .set({ used_at: input.now })
    .where('token_hash', '=', input.tokenHash)
    .where('purpose', '=', input.purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', input.now)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

/**
 * Marks every still-usable token of that user and purpose as used: after a password reset, the
 * other reset links that may be lying in the mailbox stop working (contract §2.1).
 */
export async function useUpOneTimeTokens(
  db: Executor,
  input: { userId: string; purpose: OneTimeTokenPurpose; now: Date },
): Promise<void> {
  await db
    .updateTable('one_time_tokens')
    .set({ used_at: input.now })
    .where('user_id', '=', input.userId)
    .where('purpose', '=', input.purpose)
    .where('used_at', 'is', null)
    .execute();
}
