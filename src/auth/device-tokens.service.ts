/**
 * Device tokens (contract §2.3b): a phone or tracker carries a token that writes its own device's
 * locations and nothing else, so one leaked phone can report only itself. The token is returned
 * once, at creation; only its SHA-256 is kept. Revocation takes effect at once on this node and
 * on the others through the invalidation bus, like an API key's.
 */
import type { Db } from '../db/database.ts';
import { isForeignKeyViolation } from '../db/errors.ts';
import type { Clock } from '../shared/clock.ts';
import { NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { Authenticator } from './authenticator.ts';
import {
  type DeviceToken,
  deleteDeviceToken,
  deviceOfWorkspace,
  insertDeviceToken,
  listDeviceTokens,
} from './device-tokens.repository.ts';
import { newDeviceToken } from './secret-tokens.ts';

export interface DeviceTokensContext {
  db: Db;
  clock: Clock;
  authenticator: Authenticator;
}

export async function createDeviceToken(
  ctx: DeviceTokensContext,
  workspaceId: string,
  deviceId: string,
  name: string | null,
): Promise<{ deviceToken: DeviceToken; token: string }> {
  if (!(await deviceOfWorkspace(ctx.db, workspaceId, deviceId))) throw new NotFoundError('Device');
  const { key, prefix, hash } = newDeviceToken();
  const deviceToken: DeviceToken = {
    id: uuidv7(),
    workspaceId,
    deviceId,
    name,
    prefix,
    lastUsedAt: null,
    createdAt: ctx.clock.now(),
  };
  try {
    await insertDeviceToken(ctx.db, { ...deviceToken, tokenHash: hash });
  } catch (error) {
    // The device was deleted between the check and the insert.
    if (isForeignKeyViolation(error)) throw new NotFoundError('Device');
    throw error;
  }
  return { deviceToken, token: key };
}

export async function listTokens(
  ctx: DeviceTokensContext,
  workspaceId: string,
  deviceId: string,
  offset: number,
  limit: number,
): Promise<{ tokens: DeviceToken[]; total: number }> {
  if (!(await deviceOfWorkspace(ctx.db, workspaceId, deviceId))) throw new NotFoundError('Device');
  return listDeviceTokens(ctx.db, workspaceId, deviceId, offset, limit);
}

export async function revokeDeviceToken(
  ctx: DeviceTokensContext,
  workspaceId: string,
  deviceId: string,
  tokenId: string,
): Promise<void> {
  if (!(await deleteDeviceToken(ctx.db, workspaceId, deviceId, tokenId))) {
    throw new NotFoundError(
      (await deviceOfWorkspace(ctx.db, workspaceId, deviceId)) ? 'Device token' : 'Device',
    );
  }
  ctx.authenticator.forgetDevice(deviceId);
}
