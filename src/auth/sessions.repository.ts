/** SQL for sign-in sessions: one row per login, rotating its single valid refresh token id. */
import { toDate, toDateOrNull } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';

export interface AuthSession {
  id: string;
  userId: string;
  workspaceId: string;
  refreshJti: string;
  expiresAt: Date;
  revokedAt: Date | null;
}

export async function insertSession(
  db: Executor,
  s: { id: string; userId: string; workspaceId: string; refreshJti: string; expiresAt: Date; now: Date },
): Promise<void> {
  await db
    .insertInto('auth_sessions')
    .values({
      id: s.id,
      user_id: s.userId,
      workspace_id: s.workspaceId,
      refresh_jti: s.refreshJti,
      expires_at: s.expiresAt,
      revoked_at: null,
      revoked_reason: null,
      created_at: s.now,
      refreshed_at: null,
    })
    .execute();
}

export async function findSession(db: Executor, id: string): Promise<AuthSession | undefined> {
  const row = await db.selectFrom('auth_sessions').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    userId: row.user_id,
    workspaceId: row.workspace_id,
    refreshJti: row.refresh_jti,
    expiresAt: toDate(row.expires_at),
    revokedAt: toDateOrNull(row.revoked_at),
  };
}

/**
 * Rotates the refresh token id only if `expectedJti` is still the current one: of two concurrent
 * refreshes with the same token, exactly one wins; the other is treated as reuse.
 */
export async function rotateRefreshJti(
  db: Executor,
  input: { sessionId: string; expectedJti: string; nextJti: string; expiresAt: Date; now: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('auth_sessions')
    .set({ refresh_jti: input.nextJti, refreshed_at: input.now, expires_at: input.expiresAt })
    .where('id', '=', input.sessionId)
    .where('refresh_jti', '=', input.expectedJti)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function revokeSession(
  db: Executor,
  sessionId: string,
  reason: string,
  now: Date,
): Promise<void> {
  await db
    .updateTable('auth_sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes every live session of a user; returns their ids so caches can drop them. */
export async function revokeUserSessions(
  db: Executor,
  userId: string,
  reason: string,
  now: Date,
): Promise<string[]> {
  const rows = await db
    .updateTable('auth_sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}
