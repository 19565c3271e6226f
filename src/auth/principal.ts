import type { WorkspaceRole } from '../workspaces/workspaces.tables.ts';
import type { Scope } from './scopes.ts';

/**
 * Who is calling: a signed-in user (JWT session), an API key, or a device token (contract §2.3b);
 * each acts inside one workspace. A device token reaches only the routes that declare
 * `deviceToken: true` (auth/route-auth.ts), and there only its own device.
 */
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
      /** The user who made the key (directly, or through another key of theirs). */
      createdBy: string | null;
      /**
       * The role the key acts with (contract §2.3): its creator's current role in the workspace, so a
       * key never does more than its creator may do now. `scopes` are the granted ones within it.
       */
      role: WorkspaceRole;
      grantedScopes: readonly string[];
      scopes: ReadonlySet<Scope>;
    }
  | {
      kind: 'device';
      deviceTokenId: string;
      /** The one device this credential may write locations for. */
      deviceId: string;
      workspaceId: string;
      prefix: string;
      scopes: ReadonlySet<Scope>;
    };
