/**
 * The API keys a member made in a workspace end with the membership (contract §2.3): a key never
 * does more than its creator may do now, and someone who left may do nothing there. The SQL on
 * `api_keys` is stated here, as workspaces.repository.ts reads the user facts it needs, so that
 * workspaces/ does not import auth/ (ADR 004).
 */
import type { Executor } from '../db/transaction.ts';

export interface RevokedMemberKey {
  id: string;
  name: string;
  prefix: string;
}

/** Revokes the live keys `userId` created in the workspace; returns them for the owners' notice. */
export async function revokeKeysCreatedBy(
  db: Executor,
  workspaceId: string,
  userId: string,
  now: Date,
): Promise<RevokedMemberKey[]> {
  return db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('created_by', '=', userId)
    .where('revoked_at', 'is', null)
    .returning(['id', 'name', 'prefix'])
    .execute();
}
