/**
 * Reach (contract §2.4): a signed-in user acts on every workspace it is a member of, with the role
 * of THAT membership, whichever workspace its token was issued for (GitHub's /orgs/{org} works the
 * same way); an API key acts on its own workspace only. Any other id is "Workspace not found",
 * never 403 (contract §1), so a workspace's existence is not revealed to outsiders.
 *
 * The route-auth hook judges a JWT by the role in the token's workspace, which says nothing about
 * another one: the owner/admin and key-scope checks of /workspaces/{id} are made here instead.
 */
import type { Executor } from '../db/transaction.ts';
import { InsufficientPermissionsError, NotFoundError } from '../shared/errors.ts';
import { findMembership, findWorkspace, type Workspace } from './workspaces.repository.ts';
import type { WorkspaceRole } from './workspaces.tables.ts';

/**
 * The caller as the workspace rules need it. The authenticated principal (auth/principal.ts) has
 * this shape; it is restated here so that workspaces/ does not import auth/.
 */
export type WorkspaceCaller =
  | { kind: 'user'; userId: string }
  /** `role`: the key's creator's current role there; `scopes` are already bounded by it (§2.3). */
  | { kind: 'api_key'; workspaceId: string; role: WorkspaceRole; scopes: ReadonlySet<string> };

export type WorkspaceAccess =
  | { kind: 'user'; workspace: Workspace; userId: string; role: WorkspaceRole }
  | { kind: 'api_key'; workspace: Workspace; role: WorkspaceRole; scopes: ReadonlySet<string> };

/** The workspace `workspaceId` as the caller reaches it, or 404. */
export async function reachWorkspace(
  db: Executor,
  caller: WorkspaceCaller,
  workspaceId: string,
): Promise<WorkspaceAccess> {
  if (caller.kind === 'user') {
    const membership = await findMembership(db, caller.userId, workspaceId);
    if (!membership) throw new NotFoundError('Workspace');
    return { kind: 'user', workspace: membership.workspace, userId: caller.userId, role: membership.role };
  }
  if (workspaceId !== caller.workspaceId) throw new NotFoundError('Workspace');
  const workspace = await findWorkspace(db, workspaceId);
  if (!workspace) throw new NotFoundError('Workspace');
  return { kind: 'api_key', workspace, role: caller.role, scopes: caller.scopes };
}

/**
 * Settings and members are managed by owners and admins of the workspace. An API key got here
 * through its route's declared scope (workspaces:write, checked by the route-auth hook from
 * `config.auth`, the scope the document states), so the declaration is the one place it is decided.
 */
export function assertMayManage(access: WorkspaceAccess): void {
  if (access.kind === 'api_key') return;
  if (access.role === 'member')
    throw new InsufficientPermissionsError('This action requires the owner or admin role');
}

/**
 * Only a signed-in owner of the workspace hands out or takes away ownership, or deletes it. An API
 * key never can: it would let whoever created it (possibly an admin) escalate to owner.
 */
export function assertOwner(access: WorkspaceAccess, action: string): void {
  if (access.kind !== 'user' || access.role !== 'owner')
    throw new InsufficientPermissionsError(`Only an owner can ${action}`);
}
