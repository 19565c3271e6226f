/**
 * /workspaces/{id}/invitations (contract §2.4, beyond the seed): the pending invitations, resend and
 * revoke. The rules (who may, what a resend does to the old link) are in invitations.service.ts.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses, ListOf, PaginationQuery, page } from '../http/schemas.ts';
import * as invitations from './invitations.service.ts';
import { callerOf, MANAGED } from './route-caller.ts';
import { InvitationParams, InvitationSchema, invitationOut, WorkspaceParams } from './workspaces.schemas.ts';
import type { WorkspacesContext } from './workspaces.service.ts';

const tags = ['workspaces'];

export async function invitationRoutes(fastify: FastifyInstance, ctx: WorkspacesContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/workspaces/:workspace_id/invitations',
    {
      config: { auth: { scope: 'workspaces:read', roleFromPath: true } },
      schema: {
        operationId: 'listWorkspaceInvitations',
        tags,
        summary: 'Pending invitations: sent and not yet accepted, newest first (expired ones included)',
        description:
          'Owner/admin of the workspace; a key: workspaces:read, as for the members list. An invitation ' +
          'whose `expires_at` has passed is listed until it is resent or revoked.',
        'x-required-role': MANAGED['x-required-role'],
        params: WorkspaceParams,
        querystring: PaginationQuery,
        response: { 200: ListOf(InvitationSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const offset = request.query.offset ?? 0;
      const limit = request.query.limit ?? 50;
      const { invitations: pending, total } = await invitations.pendingInvitationsOf(
        ctx,
        callerOf(request),
        request.params.workspace_id,
        offset,
        limit,
      );
      return page(pending.map(invitationOut), total, offset, limit);
    },
  );

  app.post(
    '/workspaces/:workspace_id/invitations/:invitation_id/resend',
    {
      config: { auth: { scope: 'workspaces:write', roleFromPath: true } },
      schema: {
        operationId: 'resendWorkspaceInvitation',
        tags,
        summary:
          'Send the invitation e-mail again, with a new token valid 7 days; the old link stops working',
        description:
          'Owner/admin of the workspace (only an owner resends an owner invitation); a key: ' +
          'workspaces:write. The earlier e-mail’s token is replaced: accepting with it then fails with ' +
          '400 INVALID_TOKEN. An accepted or revoked invitation is 404. At most 3 resends per address ' +
          'per rolling hour; beyond: 429 RATE_LIMIT_EXCEEDED with Retry-After, and the invitation and ' +
          'its current link stay as they were.',
        ...MANAGED,
        params: InvitationParams,
        response: { 200: InvitationSchema, ...errorResponses(401, 403, 404, 429) },
      },
    },
    async (request) =>
      invitationOut(
        await invitations.resendInvitation(
          ctx,
          callerOf(request),
          request.params.workspace_id,
          request.params.invitation_id,
        ),
      ),
  );

  app.delete(
    '/workspaces/:workspace_id/invitations/:invitation_id',
    {
      config: { auth: { scope: 'workspaces:write', roleFromPath: true } },
      schema: {
        operationId: 'revokeWorkspaceInvitation',
        tags,
        summary: 'Revoke a pending invitation: its link then fails (400 INVALID_TOKEN)',
        description: 'Owner/admin of the workspace; a key: workspaces:write. An accepted invitation is 404.',
        ...MANAGED,
        params: InvitationParams,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await invitations.revokeInvitation(
        ctx,
        callerOf(request),
        request.params.workspace_id,
        request.params.invitation_id,
      );
      return reply.status(204).send(null);
    },
  );
}
