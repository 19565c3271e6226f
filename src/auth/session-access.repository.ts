/** SQL behind the authenticator's session check: a session with its user's role in its workspace. */
import type { Executor } from '../db/transaction.ts';
import type { WorkspaceRole } from '../workspaces/workspaces.tables.ts';

export interface SessionAccess {
  userId: string;
  workspaceId: string;
  revoked: boolean;
  /** null when the user is no longer a member of the session's workspace. */
  role: WorkspaceRole | null;
}

export async function findSessionAccess(db: Executor, sessionId: string): Promise<SessionAccess | undefined> {
  const row = await db
    .selectFrom('auth_sessions as s')
    .leftJoin('workspace_members as m', (join) =>
      join.onRef('m.workspace_id', '=', 's.workspace_id').onRef('m.user_id', '=', 's.user_id'),
    )
    .select(['s.revoked_at', 's.user_id', 's.workspace_id', 'm.role'])
    .where('s.id', '=', sessionId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    userId: row.user_id,
    workspaceId: row.workspace_id,
    revoked: row.revoked_at !== null,
    role: (row.role as WorkspaceRole | null) ?? null,
  };
}
