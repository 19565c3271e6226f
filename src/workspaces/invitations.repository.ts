/** SQL for workspace invitations (token stored as SHA-256, single use, 7-day expiry). */
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
