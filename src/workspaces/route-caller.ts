/** What every /workspaces route needs from the request: the caller, and the reach rule in the document. */
import type { FastifyRequest } from 'fastify';
import { DEVICE_TOKEN_REACH, InsufficientPermissionsError, NotAuthenticatedError } from '../shared/errors.ts';
import type { WorkspaceCaller } from './workspace-access.ts';

/**
 * Reach (contract §2.4): on /workspaces/{id} a signed-in user acts with its role in THAT workspace,
 * which the token's scopes and role (those of the workspace it was issued for) do not tell. So these
 * routes declare `roleFromPath` beside their scope: the route-auth hook holds API keys to the scope
 * (the one the document states as `x-required-scope`) and leaves users to the service, which checks
 * the role of the membership; that role rule is stated in the document here.
 */
export const MANAGED = {
  'x-required-role': 'owner or admin of {workspace_id} (JWT users)',
};

/** The caller the route-auth hook authenticated for this protected route (its `config.auth`). */
export function callerOf(request: FastifyRequest): WorkspaceCaller {
  if (!request.principal) throw new NotAuthenticatedError();
  // The route-auth hook lets device tokens onto their location routes only.
  if (request.principal.kind === 'device') throw new InsufficientPermissionsError(DEVICE_TOKEN_REACH);
  return request.principal;
}

export function signedInUserId(request: FastifyRequest): string {
  const caller = callerOf(request);
  if (caller.kind !== 'user')
    throw new NotAuthenticatedError('This endpoint needs a user access token (JWT)');
  return caller.userId;
}
