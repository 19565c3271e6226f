/**
 * API key management (contract §2.3). The key is returned once, at creation; only its SHA-256 is
 * kept. Only owners and admins manage keys (the routes are adminOnly; a key counts with its
 * creator's role). A key can never be given scopes the caller does not hold now (an API key with
 * account:write cannot mint a `*` key), and it stays bound to the person who made it: a key minted
 * by a key records that key's creator, so both act within that person's current role and both end
 * when that person leaves the workspace.
 */
import type { Db } from '../db/database.ts';
import type { Clock } from '../shared/clock.ts';
import { InsufficientPermissionsError, NotFoundError, ValidationError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { WorkspaceNotices } from '../workspaces/workspaces.service.ts';
import { type ApiKey, findApiKey, insertApiKey, listApiKeys, revokeApiKey } from './api-keys.repository.ts';
import type { Authenticator } from './authenticator.ts';
import type { Principal } from './principal.ts';
import { expandScopes } from './scopes.ts';
import { newApiKey } from './secret-tokens.ts';

export interface ApiKeysContext {
  db: Db;
  clock: Clock;
  authenticator: Authenticator;
  /** Creations and revocations are told to the workspace's owners and admins (account/notifier.ts). */
  notifier: WorkspaceNotices;
}

export async function createApiKey(
  ctx: ApiKeysContext,
  principal: Principal,
  input: { name: string; scopes: string[]; expiresAt?: Date | undefined },
): Promise<{ apiKey: ApiKey; key: string }> {
  const now = ctx.clock.now();
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
    throw new ValidationError('expires_at must be in the future');
  }
  const requested = expandScopes(input.scopes);
  for (const scope of requested) {
    if (!principal.scopes.has(scope))
      throw new InsufficientPermissionsError(`Cannot grant scope ${scope}, which the caller does not hold`);
  }
  const scopes = [...new Set(input.scopes)];
  const { key, prefix, hash } = newApiKey();
  const id = uuidv7();
  await insertApiKey(ctx.db, {
    id,
    workspaceId: principal.workspaceId,
    createdBy: creatorOf(principal),
    name: input.name,
    prefix,
    keyHash: hash,
    scopes,
    expiresAt: input.expiresAt ?? null,
    now,
  });
  const apiKey = await findApiKey(ctx.db, principal.workspaceId, id);
  if (!apiKey) throw new Error('created API key vanished');
  await ctx.notifier.notifyWorkspaceAdmins({
    workspaceId: principal.workspaceId,
    topic: 'api_key',
    type: 'api_key.created',
    title: 'API key created',
    body: `The API key "${input.name}" (${prefix}…) was created with scopes ${scopes.join(', ')}.`,
    data: { api_key_id: id, prefix, scopes },
  });
  return { apiKey, key };
}

export async function listKeys(ctx: ApiKeysContext, workspaceId: string, offset: number, limit: number) {
  return listApiKeys(ctx.db, workspaceId, offset, limit);
}

export async function revokeKey(ctx: ApiKeysContext, workspaceId: string, id: string): Promise<void> {
  const apiKey = await findApiKey(ctx.db, workspaceId, id);
  if (!apiKey) throw new NotFoundError('API key');
  await revokeApiKey(ctx.db, workspaceId, id, ctx.clock.now());
  ctx.authenticator.forgetApiKeys();
  await ctx.notifier.notifyWorkspaceAdmins({
    workspaceId,
    topic: 'api_key',
    type: 'api_key.revoked',
    title: 'API key revoked',
    body: `The API key "${apiKey.name}" (${apiKey.prefix}…) was revoked.`,
    data: { api_key_id: id, prefix: apiKey.prefix },
  });
}

/** The person a new key is bound to: the signed-in user, or the creator of the key making it. */
function creatorOf(principal: Principal): string | null {
  if (principal.kind === 'user') return principal.userId;
  if (principal.kind === 'api_key') return principal.createdBy;
  throw new InsufficientPermissionsError('A device token cannot create API keys');
}
