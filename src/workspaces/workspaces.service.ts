/**
 * Workspaces, members and invitations (contract §2.4). A caller acts on its current workspace
 * only (the one its token or key names): any other id is "not found", which is how tenant
 * isolation reads from outside. Users switch workspace to manage another.
 */
import type { Authenticator } from '../auth/authenticator.ts';
import type { Principal } from '../auth/principal.ts';
import { randomToken, sha256Hex } from '../auth/secret-tokens.ts';
import { findUserByEmail, findUserById, normalizeEmail } from '../auth/users.repository.ts';
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Mailer } from '../mail/mailer.ts';
import { invitationEmail } from '../mail/templates.ts';
import type { Clock } from '../shared/clock.ts';
import {
  BadRequestError,
  DuplicateResourceError,
  InsufficientPermissionsError,
  InvalidOneTimeTokenError,
  NotFoundError,
} from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { acceptInvitation, insertInvitation } from './invitations.repository.ts';
import {
  countOwners,
  deleteMember,
  deleteWorkspace,
  findMember,
  findMembership,
  findWorkspace,
  insertMember,
  insertWorkspace,
  listMembers,
  listMemberships,
  type Member,
  type Membership,
  updateMemberRole,
  updateWorkspace,
  type Workspace,
} from './workspaces.repository.ts';
import type { WorkspaceRole } from './workspaces.tables.ts';

const INVITATION_TTL_MS = 7 * 24 * 3600_000;

export interface WorkspacesContext {
  db: Db;
  clock: Clock;
  mailer: Mailer;
  authenticator: Authenticator;
  publicUrl: string;
  /** The in-memory geofence indexes (ADR 007): a deleted workspace's is dropped at once. */
  geofenceIndexes?: { forget(workspaceId: string): void };
}

/** The caller's current workspace, or 404 for any other id. */
async function ownWorkspace(
  ctx: WorkspacesContext,
  principal: Principal,
  workspaceId: string,
): Promise<Workspace> {
  if (workspaceId !== principal.workspaceId) throw new NotFoundError('Workspace');
  const workspace = await findWorkspace(ctx.db, workspaceId);
  if (!workspace) throw new NotFoundError('Workspace');
  return workspace;
}

export async function listOwnWorkspaces(ctx: WorkspacesContext, principal: Principal): Promise<Membership[]> {
  if (principal.kind === 'user') return listMemberships(ctx.db, principal.userId);
  const workspace = await findWorkspace(ctx.db, principal.workspaceId);
  return workspace ? [{ workspace, role: 'member' }] : [];
}

export async function createWorkspace(
  ctx: WorkspacesContext,
  userId: string,
  name: string,
): Promise<Membership> {
  const id = uuidv7();
  const now = ctx.clock.now();
  await withTransaction(ctx.db, async (trx) => {
    await insertWorkspace(trx, { id, name, now });
    await insertMember(trx, { workspaceId: id, userId, role: 'owner', now });
  });
  ctx.authenticator.forgetUser(userId);
  const membership = await findMembership(ctx.db, userId, id);
  if (!membership) throw new Error('created workspace vanished');
  return membership;
}

export async function getWorkspace(
  ctx: WorkspacesContext,
  principal: Principal,
  workspaceId: string,
): Promise<Workspace> {
  return ownWorkspace(ctx, principal, workspaceId);
}

export async function patchWorkspace(
  ctx: WorkspacesContext,
  principal: Principal,
  workspaceId: string,
  patch: { name?: string | undefined; accessTokenTtlSeconds?: number | undefined },
): Promise<Workspace> {
  await ownWorkspace(ctx, principal, workspaceId);
  await updateWorkspace(ctx.db, workspaceId, { ...patch, now: ctx.clock.now() });
  ctx.authenticator.forgetAllSessions(); // names and settings show in every member's profile
  return ownWorkspace(ctx, principal, workspaceId);
}

export async function removeWorkspace(
  ctx: WorkspacesContext,
  principal: Principal,
  workspaceId: string,
): Promise<void> {
  await ownWorkspace(ctx, principal, workspaceId);
  if (principal.kind !== 'user' || principal.role !== 'owner') {
    throw new InsufficientPermissionsError('Only an owner can delete a workspace');
  }
  await deleteWorkspace(ctx.db, workspaceId);
  ctx.authenticator.forgetAllSessions();
  ctx.authenticator.forgetApiKeys();
  ctx.geofenceIndexes?.forget(workspaceId);
}

export async function membersOf(
  ctx: WorkspacesContext,
  principal: Principal,
  workspaceId: string,
  offset: number,
  limit: number,
) {
  await ownWorkspace(ctx, principal, workspaceId);
  return listMembers(ctx.db, workspaceId, offset, limit);
}

export type AddMemberResult =
  | { kind: 'member'; member: Member }
  | { kind: 'invitation'; invitation: { id: string; email: string; role: WorkspaceRole; expiresAt: Date } };

/** An existing user is added at once; anyone else gets an invitation e-mail. */
export async function addMember(
  ctx: WorkspacesContext,
  principal: Principal,
  workspaceId: string,
  input: { email: string; role: WorkspaceRole },
): Promise<AddMemberResult> {
  const workspace = await ownWorkspace(ctx, principal, workspaceId);
  assertMayGrant(principal, input.role);
  const now = ctx.clock.now();
  const user = await findUserByEmail(ctx.db, input.email);
  if (user) {
    if (await findMember(ctx.db, workspaceId, user.id))
      throw new DuplicateResourceError('This user is already a member');
    await insertMember(ctx.db, { workspaceId, userId: user.id, role: input.role, now });
    ctx.authenticator.forgetUser(user.id);
    const member = await findMember(ctx.db, workspaceId, user.id);
    if (!member) throw new Error('added member vanished');
    return { kind: 'member', member };
  }
  const token = randomToken();
  const invitation = {
    id: uuidv7(),
    email: normalizeEmail(input.email),
    role: input.role,
    expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
  };
  await insertInvitation(ctx.db, {
    ...invitation,
    workspaceId,
    tokenHash: sha256Hex(token),
    invitedBy: principal.kind === 'user' ? principal.userId : null,
    now,
  });
  await ctx.mailer.send(invitationEmail(invitation.email, ctx.publicUrl, workspace.name, input.role, token));
  return { kind: 'invitation', invitation };
}

export async function acceptWorkspaceInvitation(
  ctx: WorkspacesContext,
  userId: string,
  token: string,
): Promise<Membership> {
  const user = await findUserById(ctx.db, userId);
  if (!user) throw new NotFoundError('User');
  const now = ctx.clock.now();
  const invitation = await withTransaction(ctx.db, async (trx) => {
    const accepted = await acceptInvitation(trx, sha256Hex(token), now);
    if (!accepted) throw new InvalidOneTimeTokenError('Invitation token is invalid, used or expired');
    if (accepted.email !== user.email)
      throw new InvalidOneTimeTokenError('This invitation was sent to another e-mail address');
    if (!(await findMember(trx, accepted.workspaceId, userId))) {
      await insertMember(trx, { workspaceId: accepted.workspaceId, userId, role: accepted.role, now });
    }
    return accepted;
  });
  ctx.authenticator.forgetUser(userId);
  const membership = await findMembership(ctx.db, userId, invitation.workspaceId);
  if (!membership) throw new NotFoundError('Workspace');
  return membership;
}

export async function changeMemberRole(
  ctx: WorkspacesContext,
  principal: Principal,
  workspaceId: string,
  userId: string,
  role: WorkspaceRole,
): Promise<Member> {
  await ownWorkspace(ctx, principal, workspaceId);
  const member = await findMember(ctx.db, workspaceId, userId);
  if (!member) throw new NotFoundError('Member');
  assertMayGrant(principal, role);
  if (member.role === 'owner') assertMayGrant(principal, 'owner');
  await withTransaction(ctx.db, async (trx) => {
    if (member.role === 'owner' && role !== 'owner' && (await countOwners(trx, workspaceId)) <= 1) {
      throw new BadRequestError('The last owner cannot be demoted');
    }
    await updateMemberRole(trx, workspaceId, userId, role);
  });
  ctx.authenticator.forgetAllSessions();
  const updated = await findMember(ctx.db, workspaceId, userId);
  if (!updated) throw new NotFoundError('Member');
  return updated;
}

/** Admins remove members; anyone may leave. The last owner can do neither. */
export async function removeMember(
  ctx: WorkspacesContext,
  principal: Principal,
  workspaceId: string,
  userId: string,
): Promise<void> {
  await ownWorkspace(ctx, principal, workspaceId);
  const member = await findMember(ctx.db, workspaceId, userId);
  if (!member) throw new NotFoundError('Member');
  const leaving = principal.kind === 'user' && principal.userId === userId;
  if (!leaving) {
    // The route admits everyone with workspaces:read so members can leave; removing others needs write.
    if (!principal.scopes.has('workspaces:write'))
      throw new InsufficientPermissionsError('This action requires scope workspaces:write');
    if (member.role === 'owner') assertMayGrant(principal, 'owner');
  }
  await withTransaction(ctx.db, async (trx) => {
    if (member.role === 'owner' && (await countOwners(trx, workspaceId)) <= 1) {
      throw new BadRequestError('The last owner cannot leave or be removed');
    }
    await deleteMember(trx, workspaceId, userId);
  });
  ctx.authenticator.forgetAllSessions();
}

/**
 * Only a signed-in owner hands out or takes away ownership; admins manage admins and members. An
 * API key never can: it would let whoever created it (possibly an admin) escalate to owner.
 */
function assertMayGrant(principal: Principal, role: WorkspaceRole): void {
  if (role === 'owner' && !(principal.kind === 'user' && principal.role === 'owner')) {
    throw new InsufficientPermissionsError('Only an owner can grant or change the owner role');
  }
}
