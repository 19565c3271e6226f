/** /workspaces (contract §2.4): the caller's workspaces, settings, members and invitations. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { errorResponses, ListOf, PaginationQuery, page } from '../http/schemas.ts';
import { invitationRoutes } from './invitations.routes.ts';
import { callerOf, MANAGED, signedInUserId } from './route-caller.ts';
import {
  AddMemberBody,
  ChangeRoleBody,
  CreatedInvitationSchema,
  CreateWorkspaceBody,
  InvitationTokenBody,
  invitationOut,
  MemberParams,
  MemberSchema,
  memberOut,
  WorkspaceParams,
  WorkspacePatch,
  WorkspaceSchema,
  workspaceOut,
} from './workspaces.schemas.ts';
import * as workspaces from './workspaces.service.ts';

const tags = ['workspaces'];

export async function workspaceRoutes(
  fastify: FastifyInstance,
  ctx: workspaces.WorkspacesContext,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  /** The workspace with the caller's role in it (an API key has no role). */
  const accessOut = (access: Awaited<ReturnType<typeof workspaces.getWorkspace>>) =>
    workspaceOut(access.workspace, access.kind === 'user' ? access.role : undefined);

  app.get(
    '/workspaces',
    {
      config: { auth: { scope: 'workspaces:read' } },
      schema: {
        operationId: 'listWorkspaces',
        tags,
        summary: 'The workspaces you belong to (an API key: its own)',
        querystring: PaginationQuery,
        response: { 200: ListOf(WorkspaceSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const offset = request.query.offset ?? 0;
      const limit = request.query.limit ?? 50;
      const all = await workspaces.listOwnWorkspaces(ctx, callerOf(request));
      return page(
        all.slice(offset, offset + limit).map((m) => workspaceOut(m.workspace, m.role)),
        all.length,
        offset,
        limit,
      );
    },
  );

  app.post(
    '/workspaces',
    {
      config: { auth: { scope: null, via: 'user' } },
      schema: {
        operationId: 'createWorkspace',
        tags,
        summary: 'Create a workspace; you become its owner',
        body: CreateWorkspaceBody,
        response: { 201: WorkspaceSchema, ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      const membership = await workspaces.createWorkspace(ctx, signedInUserId(request), request.body.name);
      return reply.status(201).send(workspaceOut(membership.workspace, membership.role));
    },
  );

  app.get(
    '/workspaces/:workspace_id',
    {
      config: { auth: { scope: 'workspaces:read', roleFromPath: true } },
      schema: {
        operationId: 'getWorkspace',
        tags,
        summary: 'A workspace you belong to, with your role in it (an API key: its own workspace)',
        params: WorkspaceParams,
        response: { 200: WorkspaceSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      accessOut(await workspaces.getWorkspace(ctx, callerOf(request), request.params.workspace_id)),
  );

  app.patch(
    '/workspaces/:workspace_id',
    {
      config: { auth: { scope: 'workspaces:write', roleFromPath: true } },
      schema: {
        operationId: 'updateWorkspace',
        tags,
        summary: 'Rename the workspace or change its settings (owner/admin of it; a key: workspaces:write)',
        ...MANAGED,
        params: WorkspaceParams,
        body: WorkspacePatch,
        response: { 200: WorkspaceSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      accessOut(
        await workspaces.patchWorkspace(ctx, callerOf(request), request.params.workspace_id, {
          name: request.body.name,
          accessTokenTtlSeconds: request.body.settings?.access_token_ttl_seconds,
        }),
      ),
  );

  app.delete(
    '/workspaces/:workspace_id',
    {
      config: { auth: { scope: null, via: 'user' } },
      schema: {
        operationId: 'deleteWorkspace',
        tags,
        summary: 'Delete the workspace and everything in it (owner of it)',
        'x-required-role': 'owner of {workspace_id}',
        params: WorkspaceParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await workspaces.removeWorkspace(ctx, callerOf(request), request.params.workspace_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/workspaces/:workspace_id/members',
    {
      config: { auth: { scope: 'workspaces:read', roleFromPath: true } },
      schema: {
        operationId: 'listWorkspaceMembers',
        tags,
        summary: 'Members of the workspace',
        params: WorkspaceParams,
        querystring: PaginationQuery,
        response: { 200: ListOf(MemberSchema), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const offset = request.query.offset ?? 0;
      const limit = request.query.limit ?? 50;
      const { members, total } = await workspaces.membersOf(
        ctx,
        callerOf(request),
        request.params.workspace_id,
        offset,
        limit,
      );
      return page(members.map(memberOut), total, offset, limit);
    },
  );

  app.post(
    '/workspaces/:workspace_id/members',
    {
      config: { auth: { scope: 'workspaces:write', roleFromPath: true } },
      schema: {
        operationId: 'addWorkspaceMember',
        tags,
        summary: 'Add a member: an existing user joins at once (201); anyone else is invited by e-mail (202)',
        description:
          'Owner/admin of the workspace (only an owner grants the owner role); a key: workspaces:write. ' +
          'New invitations to one address are limited to 3 per rolling hour, whichever workspace sends ' +
          'them (no address can be flooded); beyond: 429 RATE_LIMIT_EXCEEDED with Retry-After, nothing ' +
          'created or sent. Adding an existing user sends no e-mail and is not limited. When the ' +
          'service has no SMTP_URL, the e-mail is only kept in the outbox: the 202 answer then carries ' +
          '`accept_url`, the link the e-mail holds, for the inviter to pass on (in this answer only).',
        ...MANAGED,
        params: WorkspaceParams,
        body: AddMemberBody,
        response: {
          201: MemberSchema,
          202: CreatedInvitationSchema,
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request, reply) => {
      const result = await workspaces.addMember(
        ctx,
        callerOf(request),
        request.params.workspace_id,
        request.body,
      );
      if (result.kind === 'member') return reply.status(201).send(memberOut(result.member));
      const invitation = invitationOut(result.invitation);
      return reply
        .status(202)
        .send(result.acceptUrl === null ? invitation : { ...invitation, accept_url: result.acceptUrl });
    },
  );

  app.patch(
    '/workspaces/:workspace_id/members/:user_id',
    {
      config: { auth: { scope: 'workspaces:write', roleFromPath: true } },
      schema: {
        operationId: 'updateWorkspaceMember',
        tags,
        summary: "Change a member's role (the last owner cannot be demoted)",
        description:
          'Owner/admin of the workspace (only an owner grants or takes the owner role); a key: workspaces:write. ' +
          'The API keys the member created act with the new role at once (a key never does more than ' +
          'its creator may do now).',
        ...MANAGED,
        params: MemberParams,
        body: ChangeRoleBody,
        response: { 200: MemberSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      memberOut(
        await workspaces.changeMemberRole(
          ctx,
          callerOf(request),
          request.params.workspace_id,
          request.params.user_id,
          request.body.role,
        ),
      ),
  );

  app.delete(
    '/workspaces/:workspace_id/members/:user_id',
    {
      config: { auth: { scope: 'workspaces:write', roleFromPath: true } },
      schema: {
        operationId: 'removeWorkspaceMember',
        tags,
        summary:
          'Remove a member (owner/admin of the workspace; a key: workspaces:write), or leave (your own user id)',
        description:
          'The API keys the member created in this workspace are revoked at once (they stay revoked if the ' +
          'person is added again), and its owners and admins get an `api_key.revoked` notification for each.',
        params: MemberParams,
        response: { 204: Type.Null({ description: 'Removed' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await workspaces.removeMember(
        ctx,
        callerOf(request),
        request.params.workspace_id,
        request.params.user_id,
      );
      return reply.status(204).send(null);
    },
  );

  await invitationRoutes(app, ctx);

  app.post(
    '/workspaces/invitations/accept',
    {
      config: { auth: { scope: null, via: 'user' } },
      schema: {
        operationId: 'acceptWorkspaceInvitation',
        tags,
        summary: 'Accept an invitation with its token (signed in as the invited e-mail)',
        body: InvitationTokenBody,
        response: { 200: WorkspaceSchema, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const membership = await workspaces.acceptWorkspaceInvitation(
        ctx,
        signedInUserId(request),
        request.body.token,
      );
      return workspaceOut(membership.workspace, membership.role);
    },
  );
}
