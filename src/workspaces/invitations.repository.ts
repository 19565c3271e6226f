/**
 * SQL for workspace invitations: the token stored as SHA-256, single use, 7-day expiry; a resend
 * replaces token and expiry, a revocation deletes the row.
 */
import { toDate } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';
import type { WorkspaceRole } from './workspaces.tables.ts';

export interface Invitation {
  id: string;
  workspaceId: string;
  email: string;
  role: WorkspaceRole;
  expiresAt: Date;
}

export async function insertInvitation(
  db: Executor,
  i: {
    id: string;
    workspaceId: string;
    email: string;
    role: WorkspaceRole;
    tokenHash: string;
    invitedBy: string | null;
    expiresAt: Date;
    now: Date;
  },
): Promise<void> {
  await db
    .insertInto('invitations')
    .values({
      id: i.id,
      workspace_id: i.workspaceId,
      email: i.email,
      role: i.role,
      token_hash: i.tokenHash,
      invited_by: i.invitedBy,
      expires_at: i.expiresAt,
      accepted_at: null,
      created_at: i.now,
    })
    .execute();
}

/** Marks a pending invitation accepted; the conditional update makes it single-use. */
export async function acceptInvitation(
  db: Executor,
  tokenHash: string,
  now: Date,
): Promise<Invitation | undefined> {
  const row = await db
    .updateTable('invitations')
    .set({ accepted_at: now })
    .where('token_hash', '=', tokenHash)
    .where('accepted_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['id', 'workspace_id', 'email', 'role', 'expires_at'])
    .executeTakeFirst();
  return row
    ? {
        id: row.id,
        workspaceId: row.workspace_id,
        email: row.email,
        role: row.role,
        expiresAt: toDate(row.expires_at),
      }
    : undefined;
}

/** An invitation not yet accepted (possibly expired), as owners and admins see it. */
export interface PendingInvitation extends Invitation {
  createdAt: Date;
  /** Who sent it; null when an API key did, or the inviter's account is gone (no foreign key). */
  invitedBy: { userId: string; email: string; name: string | null } | null;
}

function pendingInvitations(db: Executor, workspaceId: string) {
  return db
    .selectFrom('invitations as i')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .select([
      'i.id',
      'i.workspace_id',
      'i.email',
      'i.role',
      'i.expires_at',
      'i.created_at',
      'u.id as inviter_id',
      'u.email as inviter_email',
      'u.name as inviter_name',
    ])
    .where('i.workspace_id', '=', workspaceId)
    .where('i.accepted_at', 'is', null);
}

type PendingRow = Awaited<ReturnType<ReturnType<typeof pendingInvitations>['executeTakeFirstOrThrow']>>;

function toPending(row: PendingRow): PendingInvitation {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    email: row.email,
    role: row.role,
    expiresAt: toDate(row.expires_at),
    createdAt: toDate(row.created_at),
    invitedBy:
      row.inviter_id && row.inviter_email
        ? { userId: row.inviter_id, email: row.inviter_email, name: row.inviter_name ?? null }
        : null,
  };
}

/** Unaccepted invitations of a workspace, newest first; expired ones included, so they can be resent. */
export async function listPendingInvitations(
  db: Executor,
  workspaceId: string,
  offset: number,
  limit: number,
): Promise<{ invitations: PendingInvitation[]; total: number }> {
  const rows = await pendingInvitations(db, workspaceId)
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('invitations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('accepted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { invitations: rows.map(toPending), total: Number(count.n) };
}

export async function findPendingInvitation(
  db: Executor,
  workspaceId: string,
  invitationId: string,
): Promise<PendingInvitation | undefined> {
  const row = await pendingInvitations(db, workspaceId).where('i.id', '=', invitationId).executeTakeFirst();
  return row ? toPending(row) : undefined;
}

/**
 * Resending replaces the token (only its hash is stored, so the old one cannot be mailed again) and
 * the expiry: the link of the earlier e-mail stops working. False when it was accepted meanwhile.
 */
export async function renewInvitationToken(
  db: Executor,
  r: { workspaceId: string; invitationId: string; tokenHash: string; expiresAt: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ token_hash: r.tokenHash, expires_at: r.expiresAt })
    .where('workspace_id', '=', r.workspaceId)
    .where('id', '=', r.invitationId)
    .where('accepted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Revoking deletes the row, so its token is then "invalid" to the accept endpoint. */
export async function deletePendingInvitation(
  db: Executor,
  workspaceId: string,
  invitationId: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('invitations')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', invitationId)
    .where('accepted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
