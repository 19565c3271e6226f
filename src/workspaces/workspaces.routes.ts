/** /workspaces (contract §2.4): the caller's workspaces, settings, members and invitations. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Role, WorkspaceSchema, workspaceOut } from '../auth/auth.schemas.ts';
import { principalOf, userOf } from '../auth/route-auth.ts';
import { errorResponses, Id, ListOf, Nullable, PaginationQuery, page, Timestamp } from '../http/schemas.ts';
import type { Member } from './workspaces.repository.ts';
import * as workspaces from './workspaces.service.ts';

const tags = ['workspaces'];

const MemberSchema = Type.Object({
  user_id: Id,
  email: Type.String(),
  name: Nullable(Type.String()),
  role: Role,
  joined_at: Timestamp,
});
const InvitationSchema = Type.Object({ id: Id, email: Type.String(), role: Role, expires_at: Timestamp });
const WorkspaceParams = Type.Object({ workspace_id: Type.String() });
const MemberParams = Type.Object({ workspace_id: Type.String(), user_id: Type.String() });
const WorkspacePatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    settings: Type.Optional(
      Type.Object(
        {
          access_token_ttl_seconds: Type.Optional(
            Type.Integer({
              minimum: 300,
              maximum: 2_592_000,
              description: 'Access token lifetime, 300..2,592,000 s',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

function memberOut(m: Member) {
  return {
    user_id: m.userId,
    email: m.email,
    name: m.name,
    role: m.role,
    joined_at: m.joinedAt.toISOString(),
  };
}

export async function workspaceRoutes(
  fastify: FastifyInstance,
  ctx: workspaces.WorkspacesContext,
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/workspaces',
    {
      config: { auth: { scope: 'workspaces:read' } },
      schema: {
        tags,
        summary: 'The workspaces you belong to (an API key: its own)',
        querystring: PaginationQuery,
        response: { 200: ListOf(WorkspaceSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const offset = request.query.offset ?? 0;
      const limit = request.query.limit ?? 50;
      const all = await workspaces.listOwnWorkspaces(ctx, principalOf(request));
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
        tags,
        summary: 'Create a workspace; you become its owner',
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 255 }) },
          { additionalProperties: false },
        ),
        response: { 201: WorkspaceSchema, ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      const membership = await workspaces.createWorkspace(ctx, userOf(request).userId, request.body.name);
      return reply.status(201).send(workspaceOut(membership.workspace, membership.role));
    },
  );

  app.get(
    '/workspaces/:workspace_id',
    {
      config: { auth: { scope: 'workspaces:read' } },
      schema: {
        tags,
        summary: 'Your current workspace',
        params: WorkspaceParams,
        response: { 200: WorkspaceSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      workspaceOut(await workspaces.getWorkspace(ctx, principalOf(request), request.params.workspace_id)),
  );

  app.patch(
    '/workspaces/:workspace_id',
    {
      config: { auth: { scope: 'workspaces:write', adminOnly: true } },
      schema: {
        tags,
        summary: 'Rename the workspace or change its settings (owner/admin)',
        params: WorkspaceParams,
        body: WorkspacePatch,
        response: { 200: WorkspaceSchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) =>
      workspaceOut(
        await workspaces.patchWorkspace(ctx, principalOf(request), request.params.workspace_id, {
          name: request.body.name,
          accessTokenTtlSeconds: request.body.settings?.access_token_ttl_seconds,
        }),
      ),
  );

  app.delete(
    '/workspaces/:workspace_id',
    {
      config: { auth: { scope: 'workspaces:write', via: 'user', adminOnly: true } },
      schema: {
        tags,
        summary: 'Delete the workspace and everything in it (owner only)',
        params: WorkspaceParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await workspaces.removeWorkspace(ctx, principalOf(request), request.params.workspace_id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/workspaces/:workspace_id/members',
    {
      config: { auth: { scope: 'workspaces:read' } },
      schema: {
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
        principalOf(request),
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
      config: { auth: { scope: 'workspaces:write', adminOnly: true } },
      schema: {
        tags,
        summary: 'Add a member: an existing user joins at once (201); anyone else is invited by e-mail (202)',
        params: WorkspaceParams,
        body: Type.Object(
          { email: Type.String({ format: 'email', maxLength: 254 }), role: Role },
          { additionalProperties: false },
        ),
        response: { 201: MemberSchema, 202: InvitationSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const result = await workspaces.addMember(
        ctx,
        principalOf(request),
        request.params.workspace_id,
        request.body,
      );
      if (result.kind === 'member') return reply.status(201).send(memberOut(result.member));
      const i = result.invitation;
      return reply
        .status(202)
        .send({ id: i.id, email: i.email, role: i.role, expires_at: i.expiresAt.toISOString() });
    },
  );

  app.patch(
    '/workspaces/:workspace_id/members/:user_id',
    {
      config: { auth: { scope: 'workspaces:write', adminOnly: true } },
      schema: {
        tags,
        summary: "Change a member's role (the last owner cannot be demoted)",
        params: MemberParams,
        body: Type.Object({ role: Role }, { additionalProperties: false }),
        response: { 200: MemberSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      memberOut(
        await workspaces.changeMemberRole(
          ctx,
          principalOf(request),
          request.params.workspace_id,
          request.params.user_id,
          request.body.role,
        ),
      ),
  );

  app.delete(
    '/workspaces/:workspace_id/members/:user_id',
    {
      config: { auth: { scope: 'workspaces:read' } },
      schema: {
        tags,
        summary: 'Remove a member (owner/admin, scope workspaces:write), or leave (your own user id)',
        params: MemberParams,
        response: { 204: Type.Null({ description: 'Removed' }), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await workspaces.removeMember(
        ctx,
        principalOf(request),
        request.params.workspace_id,
        request.params.user_id,
      );
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/workspaces/invitations/accept',
    {
      config: { auth: { scope: null, via: 'user' } },
      schema: {
        tags,
        summary: 'Accept an invitation with its token (signed in as the invited e-mail)',
        body: Type.Object(
          { token: Type.String({ minLength: 1, maxLength: 512 }) },
          { additionalProperties: false },
        ),
        response: { 200: WorkspaceSchema, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const membership = await workspaces.acceptWorkspaceInvitation(
        ctx,
        userOf(request).userId,
        request.body.token,
      );
      return workspaceOut(membership.workspace, membership.role);
    },
  );
}
