import type { WorkspaceRole } from '../workspaces/workspaces.tables.ts';
import type { Scope } from './scopes.ts';

/** Who is calling: a signed-in user (JWT session) or an API key; both act inside one workspace. */
export type Principal =
  | {
      kind: 'user';
      userId: string;
      workspaceId: string;
      role: WorkspaceRole;
      sessionId: string;
      scopes: ReadonlySet<Scope>;
    }
  | {
      kind: 'api_key';
      apiKeyId: string;
      workspaceId: string;
      name: string;
      prefix: string;
      grantedScopes: readonly string[];
      scopes: ReadonlySet<Scope>;
    };
