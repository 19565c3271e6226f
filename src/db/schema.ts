/** The whole database as Kysely sees it; each domain declares its own tables. */
import type { AccountSettingsTable, NotificationsTable } from '../account/account.tables.ts';
import type { ApiKeysTable, AuthSessionsTable, OneTimeTokensTable, UsersTable } from '../auth/auth.tables.ts';
import type { EmailOutboxTable } from '../mail/mail.tables.ts';
import type {
  InvitationsTable,
  WorkspaceMembersTable,
  WorkspacesTable,
} from '../workspaces/workspaces.tables.ts';

export interface DatabaseSchema {
  users: UsersTable;
  workspaces: WorkspacesTable;
  workspace_members: WorkspaceMembersTable;
  invitations: InvitationsTable;
  auth_sessions: AuthSessionsTable;
  one_time_tokens: OneTimeTokensTable;
  api_keys: ApiKeysTable;
  account_settings: AccountSettingsTable;
  notifications: NotificationsTable;
  email_outbox: EmailOutboxTable;
}
