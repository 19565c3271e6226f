/**
 * Workspaces, members and invitations (contract §2.4). Every operation on /workspaces/{id} first
 * reaches the workspace as the caller (workspace-access.ts: a user's membership and its role, an
 * API key's own workspace), so an id the caller does not belong to is "not found".
 */
import type { Db } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Mailer } from '../mail/mailer.ts';
import { invitationAcceptUrl, invitationEmail } from '../mail/templates.ts';
import type { Clock } from '../shared/clock.ts';
import { normalizeEmail } from '../shared/email-address.ts';
import {
  BadRequestError,
  DuplicateResourceError,
  InvalidOneTimeTokenError,
  NotFoundError,
} from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { randomToken, sha256Hex } from '../shared/random-secrets.ts';
import { type InvitationMailLimits, spendInvitationEmail } from './invitation-mail-limits.ts';
import {
  acceptInvitation,
  findPendingInvitation,
  insertInvitation,
  type PendingInvitation,
} from './invitations.repository.ts';
import { INVITATION_TTL_MS } from './invitations.service.ts';
import { type RevokedMemberKey, revokeKeysCreatedBy } from './member-keys.repository.ts';
import {
  assertMayManage,
  assertOwner,
  reachWorkspace,
  type WorkspaceAccess,
  type WorkspaceCaller,
} from './workspace-access.ts';
import {
  countOwners,
  deleteMember,
  deleteWorkspace,
  findMember,
  findMembership,
  findUserEmail,
  findUserIdByEmail,
  findWorkspace,
  insertMember,
  insertWorkspace,
  listMembers,
  listMemberships,
  type Member,
  type Membership,
  updateMemberRole,
  updateWorkspace,
} from './workspaces.repository.ts';
import type { WorkspaceRole } from './workspaces.tables.ts';

/**
 * The authenticator's caches of sessions, profiles and API keys hold memberships and roles: every
 * change here drops them (ADR 004). Its interface is stated here so workspaces/ does not import auth/.
 */
export interface MembershipCaches {
  forgetUser(userId: string): void;
  forgetAllSessions(): void;
  forgetApiKeys(): void;
}

/**
 * Notices to a workspace's owners and admins (account/notifier.ts), stated here so that workspaces/
 * does not import account/ (which reads the workspace's admins from this folder).
 */
export interface WorkspaceNotices {
  notifyWorkspaceAdmins(input: {
    workspaceId: string;
    topic: 'api_key';
    type: string;
    title: string;
    body: string;
    data: Record<string, unknown>;
  }): Promise<void>;
}

export interface WorkspacesContext {
  db: Db;
  clock: Clock;
  mailer: Mailer;
  authenticator: MembershipCaches;
  notifier: WorkspaceNotices;
  /** Per-address budgets of invitation e-mails (contract §2.1). */
  invitationMail: InvitationMailLimits;
  publicUrl: string;
  /** The in-memory geofence indexes (ADR 007): a deleted workspace's is dropped at once. */
  geofenceIndexes?: { forget(workspaceId: string): void };
}

/** The caller's workspaces with its role in each; an API key's own workspace only. */
export async function listOwnWorkspaces(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
): Promise<Membership[]> {
  if (caller.kind === 'user') return listMemberships(ctx.db, caller.userId);
  const workspace = await findWorkspace(ctx.db, caller.workspaceId);
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

/** The workspace and, for a signed-in user, the role of its membership there. */
export async function getWorkspace(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
): Promise<WorkspaceAccess> {
  return reachWorkspace(ctx.db, caller, workspaceId);
}

export async function patchWorkspace(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
  patch: { name?: string | undefined; accessTokenTtlSeconds?: number | undefined },
): Promise<WorkspaceAccess> {
  assertMayManage(await reachWorkspace(ctx.db, caller, workspaceId));
  await updateWorkspace(ctx.db, workspaceId, { ...patch, now: ctx.clock.now() });
  ctx.authenticator.forgetAllSessions(); // names and settings show in every member's profile
  return reachWorkspace(ctx.db, caller, workspaceId);
}

export async function removeWorkspace(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
): Promise<void> {
  assertOwner(await reachWorkspace(ctx.db, caller, workspaceId), 'delete a workspace');
  await deleteWorkspace(ctx.db, workspaceId);
  ctx.authenticator.forgetAllSessions();
  ctx.authenticator.forgetApiKeys();
  ctx.geofenceIndexes?.forget(workspaceId);
}

export async function membersOf(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
  offset: number,
  limit: number,
) {
  await reachWorkspace(ctx.db, caller, workspaceId);
  return listMembers(ctx.db, workspaceId, offset, limit);
}

export type AddMemberResult =
  | { kind: 'member'; member: Member }
  | {
      kind: 'invitation';
      invitation: PendingInvitation;
      /**
       * Without SMTP the e-mail is only kept in the outbox, which the inviter cannot read: the
       * link it holds is given to the inviter (an owner or admin) to pass on instead. Null when
       * the e-mail goes out: the link then reaches the invitee alone.
       */
      acceptUrl: string | null;
    };

/** An existing user is added at once; anyone else gets an invitation e-mail. */
export async function addMember(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
  input: { email: string; role: WorkspaceRole },
): Promise<AddMemberResult> {
  const access = await reachWorkspace(ctx.db, caller, workspaceId);
  assertMayManage(access);
  if (input.role === 'owner') assertOwner(access, 'grant or change the owner role');
  const now = ctx.clock.now();
  const userId = await findUserIdByEmail(ctx.db, input.email);
  if (userId) {
    if (await findMember(ctx.db, workspaceId, userId))
      throw new DuplicateResourceError('This user is already a member');
    await insertMember(ctx.db, { workspaceId, userId, role: input.role, now });
    ctx.authenticator.forgetUser(userId);
    const member = await findMember(ctx.db, workspaceId, userId);
    if (!member) throw new Error('added member vanished');
    return { kind: 'member', member };
  }
  const email = normalizeEmail(input.email);
  await spendInvitationEmail(ctx.invitationMail.newInvitations, email);
  const token = randomToken();
  const id = uuidv7();
  await insertInvitation(ctx.db, {
    id,
    email,
    role: input.role,
    expiresAt: new Date(now.getTime() + INVITATION_TTL_MS),
    workspaceId,
    tokenHash: sha256Hex(token),
    invitedBy: access.kind === 'user' ? access.userId : null,
    now,
  });
  await ctx.mailer.send(invitationEmail(email, ctx.publicUrl, access.workspace.name, input.role, token));
  const invitation = await findPendingInvitation(ctx.db, workspaceId, id);
  if (!invitation) throw new Error('created invitation vanished');
  const acceptUrl = ctx.mailer.sends ? null : invitationAcceptUrl(ctx.publicUrl, token);
  return { kind: 'invitation', invitation, acceptUrl };
}

export async function acceptWorkspaceInvitation(
  ctx: WorkspacesContext,
  userId: string,
  token: string,
): Promise<Membership> {
  const email = await findUserEmail(ctx.db, userId);
  if (!email) throw new NotFoundError('User');
  const now = ctx.clock.now();
  const invitation = await withTransaction(ctx.db, async (trx) => {
    const accepted = await acceptInvitation(trx, sha256Hex(token), now);
    if (!accepted) throw new InvalidOneTimeTokenError('Invitation token is invalid, used or expired');
    if (accepted.email !== email)
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
  caller: WorkspaceCaller,
  workspaceId: string,
  userId: string,
  role: WorkspaceRole,
): Promise<Member> {
  const access = await reachWorkspace(ctx.db, caller, workspaceId);
  assertMayManage(access);
  const member = await findMember(ctx.db, workspaceId, userId);
  if (!member) throw new NotFoundError('Member');
  if (role === 'owner' || member.role === 'owner') assertOwner(access, 'grant or change the owner role');
  await withTransaction(ctx.db, async (trx) => {
    if (member.role === 'owner' && role !== 'owner' && (await countOwners(trx, workspaceId)) <= 1) {
      throw new BadRequestError('The last owner cannot be demoted');
    }
    await updateMemberRole(trx, workspaceId, userId, role);
  });
  ctx.authenticator.forgetAllSessions();
  // The member's keys act with the member's role now (contract §2.3): on every node at once.
  ctx.authenticator.forgetApiKeys();
  const updated = await findMember(ctx.db, workspaceId, userId);
  if (!updated) throw new NotFoundError('Member');
  return updated;
}

/**
 * Owners and admins remove members; anyone may leave. The last owner can do neither. The keys the
 * member created in the workspace are revoked in the same transaction (contract §2.3): they do not
 * come back if the person is added again, and the owners and admins are told of each.
 */
export async function removeMember(
  ctx: WorkspacesContext,
  caller: WorkspaceCaller,
  workspaceId: string,
  userId: string,
): Promise<void> {
  const access = await reachWorkspace(ctx.db, caller, workspaceId);
  const leaving = access.kind === 'user' && access.userId === userId;
  if (!leaving) assertMayManage(access);
  const member = await findMember(ctx.db, workspaceId, userId);
  if (!member) throw new NotFoundError('Member');
  if (!leaving && member.role === 'owner') assertOwner(access, 'grant or change the owner role');
  const revoked = await withTransaction(ctx.db, async (trx) => {
    if (member.role === 'owner' && (await countOwners(trx, workspaceId)) <= 1) {
      throw new BadRequestError('The last owner cannot leave or be removed');
    }
    await deleteMember(trx, workspaceId, userId);
    return revokeKeysCreatedBy(trx, workspaceId, userId, ctx.clock.now());
  });
  ctx.authenticator.forgetAllSessions();
  ctx.authenticator.forgetApiKeys();
  for (const key of revoked) await noticeKeyRevoked(ctx, workspaceId, key, member.email);
}

async function noticeKeyRevoked(
  ctx: WorkspacesContext,
  workspaceId: string,
  key: RevokedMemberKey,
  creatorEmail: string,
): Promise<void> {
  await ctx.notifier.notifyWorkspaceAdmins({
    workspaceId,
    topic: 'api_key',
    type: 'api_key.revoked',
    title: 'API key revoked',
    body:
      `The API key "${key.name}" (${key.prefix}…) was revoked: ${creatorEmail}, who created it, ` +
      'is no longer a member of the workspace.',
    data: { api_key_id: key.id, prefix: key.prefix, reason: 'creator_left_workspace' },
  });
}
