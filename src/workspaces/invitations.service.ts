/**
 * Pending invitations (contract §2.4, beyond the seed): owners and admins list them, resend them and
 * revoke them. Sending the first one is addMember's (workspaces.service.ts), accepting it
 * acceptWorkspaceInvitation's.
 *
 * A resend issues a NEW token and a fresh 7-day expiry: only the token's hash is stored, so the old
 * one cannot be mailed again, and replacing it means a link that leaked with the first e-mail stops
 * working. A revocation deletes the row, so its link meets the accept endpoint's usual
 * "invalid, used or expired" (400 INVALID_TOKEN). An accepted invitation is no longer pending: 404.
 */
import { invitationEmail } from '../mail/templates.ts';
import { InsufficientPermissionsError, NotFoundError } from '../shared/errors.ts';
import { randomToken, sha256Hex } from '../shared/random-secrets.ts';
import { spendInvitationEmail } from './invitation-mail-limits.ts';
import {
  deletePendingInvitation,
  findPendingInvitation,
  listPendingInvitations,
  type PendingInvitation,
  renewInvitationToken,
} from './invitations.repository.ts';
import {
  assertMayManage,
  assertOwner,
  reachWorkspace,
  type WorkspaceAccess,
  type WorkspaceCaller,
} from './workspace-access.ts';
import type { WorkspacesContext } from './workspaces.service.ts';

export const INVITATION_TTL_MS = 7 * 24 * 3600_000;

/**
 * Who may see pending invitations: owners and admins (they send them; a member sees only who has
 * joined), and an API key with workspaces:read, as for the members list (the route checks the
 * scope), while its creator is still an owner or admin: a key never sees more than its creator may.
 */
function assertMaySeeInvitations(access: WorkspaceAccess): void {
  if (access.kind === 'user') assertMayManage(access);
  else if (access.role === 'member')
    throw new InsufficientPermissionsError("This action requires the key's creator to be an owner or admin");
}

export async function pendingInvitationsOf(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
  offset: number,
  limit: number,
): Promise<{ invitations: PendingInvitation[]; total: number }> {
  assertMaySeeInvitations(await reachWorkspace(ctx.db, caller, workspaceId));
  return listPendingInvitations(ctx.db, workspaceId, offset, limit);
}

/** The invitation as the caller may manage it: owner/admin, and an owner for an owner invitation. */
async function managedInvitation(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
  invitationId: string,
): Promise<{ access: WorkspaceAccess; invitation: PendingInvitation }> {
  const access = await reachWorkspace(ctx.db, caller, workspaceId);
  assertMayManage(access);
  const invitation = await findPendingInvitation(ctx.db, workspaceId, invitationId);
  if (!invitation) throw new NotFoundError('Invitation');
  return { access, invitation };
}

export async function resendInvitation(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
  invitationId: string,
): Promise<PendingInvitation> {
  const { access, invitation } = await managedInvitation(ctx, caller, workspaceId, invitationId);
  // Renewing an owner invitation grants ownership for another week: an owner's decision.
  if (invitation.role === 'owner') assertOwner(access, 'grant or change the owner role');
  await spendInvitationEmail(ctx.invitationMail.resends, invitation.email);
  const token = randomToken();
  const expiresAt = new Date(ctx.clock.now().getTime() + INVITATION_TTL_MS);
  const renewed = await renewInvitationToken(ctx.db, {
    workspaceId,
    invitationId,
    tokenHash: sha256Hex(token),
    expiresAt,
  });
  if (!renewed) throw new NotFoundError('Invitation'); // accepted or revoked meanwhile
  await ctx.mailer.send(
    invitationEmail(invitation.email, ctx.publicUrl, access.workspace.name, invitation.role, token),
  );
  return { ...invitation, expiresAt };
}

export async function revokeInvitation(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
  invitationId: string,
): Promise<void> {
  await managedInvitation(ctx, caller, workspaceId, invitationId);
  if (!(await deletePendingInvitation(ctx.db, workspaceId, invitationId))) {
    throw new NotFoundError('Invitation');
  }
}
