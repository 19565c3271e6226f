/** /account/api-keys (contract §2.3): create (key shown once), list, revoke. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { component } from '../http/components.ts';
import {
  errorResponses,
  Id,
  ListOf,
  Nullable,
  PaginationQuery,
  page,
  StringEnum,
  Timestamp,
} from '../http/schemas.ts';
import type { ApiKey } from './api-keys.repository.ts';
import { type ApiKeysContext, createApiKey, listKeys, revokeKey } from './api-keys.service.ts';
import { principalOf } from './route-auth.ts';
import { GRANTABLE_SCOPES } from './scopes.ts';

const tags = ['api keys'];

const ApiKeySchema = Type.Object({
  id: Id,
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  prefix: Type.String({ description: 'First 12 characters of the key, for recognising it' }),
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
  expires_at: Nullable(Timestamp),
});
component('ApiKey', ApiKeySchema);

const CreatedApiKeySchema = Type.Object({
  ...ApiKeySchema.properties,
  key: Type.String({ description: 'The secret key: shown in this response only' }),
});
component('CreatedApiKey', CreatedApiKeySchema);

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    scopes: Type.Array(StringEnum(GRANTABLE_SCOPES), {
      minItems: 1,
      maxItems: 20,
      description: 'Scopes; `*` grants all',
    }),
    expires_at: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  },
  { additionalProperties: false },
);

function apiKeyOut(k: ApiKey) {
  return {
    id: k.id,
    name: k.name,
    scopes: k.scopes,
    prefix: k.prefix,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    expires_at: k.expiresAt?.toISOString() ?? null,
  };
}

export async function apiKeyRoutes(fastify: FastifyInstance, ctx: ApiKeysContext): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/account/api-keys',
    {
      config: { auth: { scope: 'account:write', adminOnly: true } },
      schema: {
        operationId: 'createApiKey',
        tags,
        summary: 'Create an API key; the key is shown once',
        body: CreateBody,
        response: { 201: CreatedApiKeySchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { apiKey, key } = await createApiKey(ctx, principalOf(request), {
        name: request.body.name,
        scopes: request.body.scopes,
        expiresAt: request.body.expires_at ? new Date(request.body.expires_at) : undefined,
      });
      return reply.status(201).send({ ...apiKeyOut(apiKey), key });
    },
  );

  app.get(
    '/account/api-keys',
    {
      config: { auth: { scope: 'account:read', adminOnly: true } },
      schema: {
        operationId: 'listApiKeys',
        tags,
        summary: 'List the workspace’s active API keys',
        querystring: PaginationQuery,
        response: { 200: ListOf(ApiKeySchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const offset = request.query.offset ?? 0;
      const limit = request.query.limit ?? 50;
      const { keys, total } = await listKeys(ctx, principalOf(request).workspaceId, offset, limit);
      return page(keys.map(apiKeyOut), total, offset, limit);
    },
  );

  app.delete(
    '/account/api-keys/:api_key_id',
    {
      config: { auth: { scope: 'account:write', adminOnly: true } },
      schema: {
        operationId: 'revokeApiKey',
        tags,
        summary: 'Revoke an API key (at once)',
        params: Type.Object({ api_key_id: Type.String() }),
        response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await revokeKey(ctx, principalOf(request).workspaceId, request.params.api_key_id);
      return reply.status(204).send(null);
    },
  );
}
