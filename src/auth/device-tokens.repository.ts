/**
 * SQL for device tokens (contract §2.3b). Every query but the authentication lookup is scoped by
 * workspace and device; the lookup is by hash, since the token is what names its device.
 */
import type { Selectable } from 'kysely';
import { toDate, toDateOrNull } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';
import type { DeviceTokensTable } from './auth.tables.ts';

export interface DeviceToken {
  id: string;
  workspaceId: string;
  deviceId: string;
  name: string | null;
  prefix: string;
  lastUsedAt: Date | null;
  createdAt: Date;
}

const COLUMNS = ['id', 'workspace_id', 'device_id', 'name', 'prefix', 'last_used_at', 'created_at'] as const;

type DeviceTokenRow = Pick<Selectable<DeviceTokensTable>, (typeof COLUMNS)[number]>;

function toDeviceToken(row: DeviceTokenRow): DeviceToken {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    deviceId: row.device_id,
    name: row.name,
    prefix: row.prefix,
    lastUsedAt: toDateOrNull(row.last_used_at),
    createdAt: toDate(row.created_at),
  };
}

/**
 * Whether the device is the workspace's (tokens are made only for such devices). devices/ has the
 * same read, but auth/ comes before devices/ in the folders' import order (docs/architecture.md).
 */
export async function deviceOfWorkspace(
  db: Executor,
  workspaceId: string,
  deviceId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('devices')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', deviceId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Stores a token; the device foreign key refuses it if the device was deleted meanwhile. */
export async function insertDeviceToken(db: Executor, t: DeviceToken & { tokenHash: string }): Promise<void> {
  await db
    .insertInto('device_tokens')
    .values({
      id: t.id,
      workspace_id: t.workspaceId,
      device_id: t.deviceId,
      name: t.name,
      prefix: t.prefix,
      token_hash: t.tokenHash,
      last_used_at: null,
      created_at: t.createdAt,
    })
    .execute();
}

export async function listDeviceTokens(
  db: Executor,
  workspaceId: string,
  deviceId: string,
  offset: number,
  limit: number,
): Promise<{ tokens: DeviceToken[]; total: number }> {
  const rows = await db
    .selectFrom('device_tokens')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('device_id', '=', deviceId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(offset)
    .limit(limit)
    .execute();
  const count = await db
    .selectFrom('device_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('device_id', '=', deviceId)
    .executeTakeFirstOrThrow();
  return { tokens: rows.map(toDeviceToken), total: Number(count.n) };
}

/** Revokes (deletes) one token of the device; false when there is none with that id. */
export async function deleteDeviceToken(
  db: Executor,
  workspaceId: string,
  deviceId: string,
  id: string,
): Promise<boolean> {
  const result = await db
    .deleteFrom('device_tokens')
    .where('workspace_id', '=', workspaceId)
    .where('device_id', '=', deviceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Authentication lookup by hash. */
export async function findDeviceTokenByHash(
  db: Executor,
  tokenHash: string,
): Promise<DeviceToken | undefined> {
  const row = await db
    .selectFrom('device_tokens')
    .select(COLUMNS)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row ? toDeviceToken(row) : undefined;
}

/** Records when a token was last used (the authenticator writes it at most once a minute per token). */
export async function touchDeviceToken(db: Executor, id: string, usedAt: Date): Promise<void> {
  await db.updateTable('device_tokens').set({ last_used_at: usedAt }).where('id', '=', id).execute();
}
