/** SQL for API keys; every query but the authentication lookup is scoped by workspace. */
import type { Selectable } from 'kysely';
import { fromJson, json, toDate, toDateOrNull } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';
import type { WorkspaceRole } from '../workspaces/workspaces.tables.ts';
import type { ApiKeysTable } from './auth.tables.ts';

export interface ApiKey {
  id: string;
  workspaceId: string;
  createdBy: string | null;
  name: string;
  prefix: string;
  scopes: string[];
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
}

const COLUMNS = [
  'id',
  'workspace_id',
  'created_by',
  'name',
  'prefix',
  'scopes',
  'expires_at',
  'last_used_at',
  'revoked_at',
  'created_at',
] as const;

/** A row as read, derived from the table declaration so the two cannot drift apart. */
type ApiKeyRow = Pick<Selectable<ApiKeysTable>, (typeof COLUMNS)[number]>;

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    createdBy: row.created_by,
    name: row.name,
    prefix: row.prefix,
    scopes: fromJson<string[]>(row.scopes),
    expiresAt: toDateOrNull(row.expires_at),
    lastUsedAt: toDateOrNull(row.last_used_at),
    revokedAt: toDateOrNull(row.revoked_at),
    createdAt: toDate(row.created_at),
  };
}

export async function insertApiKey(
  db: Executor,
  k: {
    id: string;
    workspaceId: string;
    createdBy: string | null;
    name: string;
    prefix: string;
    keyHash: string;
    scopes: string[];
    expiresAt: Date | null;
    now: Date;
  },
): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: k.id,
      workspace_id: k.workspaceId,
      created_by: k.createdBy,
      name: k.name,
      prefix: k.prefix,
      key_hash: k.keyHash,
      scopes: json(k.scopes),
      expires_at: k.expiresAt,
      last_used_at: null,
      revoked_at: null,
      created_at: k.now,
    })
    .execute();
}

/**
 * A key as authentication needs it: with its creator's role in the key's workspace now (contract
 * §2.3), `null` when the creator is not a member there (any more).
 */
export interface KeyForAuth {
  key: ApiKey;
  creatorRole: WorkspaceRole | null;
}

const KEY_COLUMNS = COLUMNS.map((c) => `k.${c}` as const);

function keysWithCreatorRole(db: Executor) {
  return db
    .selectFrom('api_keys as k')
    .leftJoin('workspace_members as m', (join) =>
      join.onRef('m.workspace_id', '=', 'k.workspace_id').onRef('m.user_id', '=', 'k.created_by'),
    )
    .select([...KEY_COLUMNS, 'm.role as creator_role']);
}

/** Authentication lookup by hash (not workspace-scoped: the key is what names the workspace). */
export async function findKeyForAuthByHash(db: Executor, keyHash: string): Promise<KeyForAuth | undefined> {
  const row = await keysWithCreatorRole(db).where('k.key_hash', '=', keyHash).executeTakeFirst();
  return row ? { key: toApiKey(row), creatorRole: row.creator_role } : undefined;
}

/** The same by id, for stream tokens (which name the key, not its secret). */
export async function findKeyForAuthById(
  db: Executor,
  workspaceId: string,
  id: string,
): Promise<KeyForAuth | undefined> {
  const row = await keysWithCreatorRole(db)
    .where('k.workspace_id', '=', workspaceId)
    .where('k.id', '=', id)
    .executeTakeFirst();
  return row ? { key: toApiKey(row), creatorRole: row.creator_role } : undefined;
}

export async function listApiKeys(
  db: Executor,
  workspaceId: string,
  offset: number,
  limit: number,
): Promise<{ keys: ApiKey[]; total: number }> {
  const rows = await db
    .selectFrom('api_keys')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { keys: rows.map(toApiKey), total: Number(count.n) };
}

export async function findApiKey(db: Executor, workspaceId: string, id: string): Promise<ApiKey | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return row ? toApiKey(row) : undefined;
}

export async function revokeApiKey(db: Executor, workspaceId: string, id: string, now: Date): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ revoked_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

/** Records when a key was last used (the authenticator writes it at most once a minute per key). */
export async function touchApiKey(db: Executor, id: string, usedAt: Date): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: usedAt }).where('id', '=', id).execute();
}

/** The ids of the workspace's keys that are not revoked. */
export async function listActiveApiKeyIds(db: Executor, workspaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('api_keys')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.map((r) => r.id);
}
