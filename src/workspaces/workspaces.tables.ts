import type { NullableTimestampColumn, TimestampColumn } from '../db/columns.ts';

export type WorkspaceRole = 'owner' | 'admin' | 'member';

export interface WorkspacesTable {
  id: string;
  name: string;
  access_token_ttl_seconds: number;
  created_at: TimestampColumn;
  updated_at: TimestampColumn;
}

export interface WorkspaceMembersTable {
  workspace_id: string;
  user_id: string;
  role: WorkspaceRole;
  created_at: TimestampColumn;
}

export interface InvitationsTable {
  id: string;
  workspace_id: string;
  email: string;
  role: WorkspaceRole;
  token_hash: string;
  invited_by: string | null;
  expires_at: TimestampColumn;
  accepted_at: NullableTimestampColumn;
  created_at: TimestampColumn;
}
