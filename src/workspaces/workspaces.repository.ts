/**
 * SQL for workspaces and memberships. Tenant isolation lives here: every read of a workspace goes
 * through the caller's membership, so another workspace's id is simply not found.
 */
import type { Selectable } from 'kysely';
import { toDate } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';
import { normalizeEmail } from '../shared/email-address.ts';
import type { WorkspaceRole, WorkspacesTable } from './workspaces.tables.ts';

export const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 86_400;

export interface Workspace {
  id: string;
  name: string;
  accessTokenTtlSeconds: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface Membership {
  workspace: Workspace;
  role: WorkspaceRole;
}

export interface Member {
  userId: string;
  email: string;
  name: string | null;
  role: WorkspaceRole;
  joinedAt: Date;
}

/** A row as read, derived from the table declaration so the two cannot drift apart. */
type WorkspaceRow = Selectable<WorkspacesTable>;

function toWorkspace(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    accessTokenTtlSeconds: row.access_token_ttl_seconds,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

export async function insertWorkspace(
  db: Executor,
  w: { id: string; name: string; now: Date },
): Promise<void> {
  await db
    .insertInto('workspaces')
    .values({
      id: w.id,
      name: w.name,
      access_token_ttl_seconds: DEFAULT_ACCESS_TOKEN_TTL_SECONDS,
      created_at: w.now,
      updated_at: w.now,
    })
    .execute();
}

export async function insertMember(
  db: Executor,
  m: { workspaceId: string; userId: string; role: WorkspaceRole; now: Date },
): Promise<void> {
  await db
    .insertInto('workspace_members')
    .values({ workspace_id: m.workspaceId, user_id: m.userId, role: m.role, created_at: m.now })
    .execute();
}

export async function findWorkspace(db: Executor, workspaceId: string): Promise<Workspace | undefined> {
  const row = await db.selectFrom('workspaces').selectAll().where('id', '=', workspaceId).executeTakeFirst();
  return row ? toWorkspace(row) : undefined;
}

/** The caller's membership in a workspace, or undefined: the only way routes reach a workspace. */
export async function findMembership(
  db: Executor,
  userId: string,
  workspaceId: string,
): Promise<Membership | undefined> {
  const row = await db
    .selectFrom('workspace_members as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['w.id', 'w.name', 'w.access_token_ttl_seconds', 'w.created_at', 'w.updated_at', 'm.role'])
    .where('m.user_id', '=', userId)
    .where('m.workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return row ? { workspace: toWorkspace(row), role: row.role } : undefined;
}

export async function listMemberships(db: Executor, userId: string): Promise<Membership[]> {
  const rows = await db
    .selectFrom('workspace_members as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['w.id', 'w.name', 'w.access_token_ttl_seconds', 'w.created_at', 'w.updated_at', 'm.role'])
    .where('m.user_id', '=', userId)
    .orderBy('m.created_at', 'asc')
    .orderBy('w.id', 'asc')
    .execute();
  return rows.map((row) => ({ workspace: toWorkspace(row), role: row.role }));
}

export async function updateWorkspace(
  db: Executor,
  workspaceId: string,
  patch: { name?: string; accessTokenTtlSeconds?: number; now: Date },
): Promise<void> {
  await db
    .updateTable('workspaces')
    .set({
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.accessTokenTtlSeconds !== undefined
        ? { access_token_ttl_seconds: patch.accessTokenTtlSeconds }
        : {}),
      updated_at: patch.now,
    })
    .where('id', '=', workspaceId)
    .execute();
}

export async function deleteWorkspace(db: Executor, workspaceId: string): Promise<void> {
  await db.deleteFrom('workspaces').where('id', '=', workspaceId).execute();
}

export async function listMembers(
  db: Executor,
  workspaceId: string,
  offset: number,
  limit: number,
): Promise<{ members: Member[]; total: number }> {
  const rows = await db
    .selectFrom('workspace_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.email', 'u.name', 'm.role', 'm.created_at'])
    .where('m.workspace_id', '=', workspaceId)
    .orderBy('m.created_at', 'desc')
    .orderBy('u.id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('workspace_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return {
    members: rows.map((r) => ({
      userId: r.id,
      email: r.email,
      name: r.name,
      role: r.role,
      joinedAt: toDate(r.created_at),
    })),
    total: Number(count.n),
  };
}

export async function findMember(
  db: Executor,
  workspaceId: string,
  userId: string,
): Promise<Member | undefined> {
  const row = await db
    .selectFrom('workspace_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.email', 'u.name', 'm.role', 'm.created_at'])
    .where('m.workspace_id', '=', workspaceId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
  return row
    ? { userId: row.id, email: row.email, name: row.name, role: row.role, joinedAt: toDate(row.created_at) }
    : undefined;
}

export async function countOwners(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('workspace_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateMemberRole(
  db: Executor,
  workspaceId: string,
  userId: string,
  role: WorkspaceRole,
): Promise<void> {
  await db
    .updateTable('workspace_members')
    .set({ role })
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .execute();
}

export async function deleteMember(db: Executor, workspaceId: string, userId: string): Promise<void> {
  await db
    .deleteFrom('workspace_members')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .execute();
}

/** The owners and admins of a workspace, who hear about its dead letters, quota and API keys. */
export async function listWorkspaceAdmins(
  db: Executor,
  workspaceId: string,
): Promise<Array<{ userId: string; email: string }>> {
  const rows = await db
    .selectFrom('workspace_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.email'])
    .where('m.workspace_id', '=', workspaceId)
    .where('m.role', 'in', ['owner', 'admin'])
    .execute();
  return rows.map((r) => ({ userId: r.id, email: r.email }));
}

/**
 * The people side of adding a member or accepting an invitation: who holds an address, and which
 * address a user holds. Read here rather than through auth/'s users repository so that workspaces/
 * does not import auth/ (auth/ imports workspaces/).
 */
export async function findUserIdByEmail(db: Executor, email: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('email', '=', normalizeEmail(email))
    .executeTakeFirst();
  return row?.id;
}

export async function findUserEmail(db: Executor, userId: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst();
  return row?.email;
}
