/**
 * The OpenAPI 3.0 document is generated from the route schemas (`@fastify/swagger`), served at
 * `/openapi/openapi.json`, and browsable at `/docs` (Swagger UI from the installed package: no
 * internet needed). Registered before any route so every route is collected.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { openApiAuthFields, type RouteAuth } from '../auth/route-auth.ts';

export const API_PREFIX = '/api/v1';

const DESCRIPTION = `Self-hosted geofencing service. Devices report locations; the service detects when they enter
or leave polygon and circle geofences, records the events and delivers them as signed webhooks.

Conventions (contract §1): JSON in and out; errors are \`{detail, error_code?, details?}\`; schema
failures are 422 with \`detail\` an array of \`{type, loc, msg}\`; malformed JSON is 400; lists take
\`offset\`/\`limit\` (1..200, default 50) and answer \`{results, pagination}\`; ids are UUIDv7;
timestamps are ISO 8601 UTC. Every route states the API-key scope it needs (\`x-required-scope\`).`;

export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Geofencing Service API', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: publicUrl, description: 'This server; API paths carry the /api/v1 version prefix' }],
      components: {
        securitySchemes: {
          bearerJwt: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'Access token from POST /auth/login',
          },
          bearerApiKey: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'API key (gf_live_…)',
            description: 'API key sent as Authorization: Bearer <key>',
          },
          apiKeyHeader: {
            type: 'apiKey',
            in: 'header',
            name: 'X-API-Key',
            description: 'API key sent as X-API-Key',
          },
        },
      },
    },
    // Every answer to an API key carries the key's hourly budget (contract §7): documented on each
    // operation an API key may call, from the same `x-auth-via` the auth declaration produced.
    transformObject: (documentObject) =>
      'openapiObject' in documentObject
        ? withRateLimitHeaders(documentObject.openapiObject)
        : documentObject.swaggerObject,
    // Security requirements and the required scope come from each route's `config.auth`.
    transform: ({ schema, url, route }) => ({
      schema: { ...schema, ...openApiAuthFields((route.config as { auth?: RouteAuth } | undefined)?.auth) },
      url,
    }),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': {
    description: "API-key requests allowed per rolling hour by the workspace's plan (API-key requests only)",
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current rolling hour (API-key requests only)',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the budget next grows (API-key requests only)',
    schema: { type: 'integer' },
  },
};

interface DocumentOperation {
  'x-auth-via'?: string;
  responses?: Record<string, { headers?: Record<string, unknown> }>;
}

/** Adds the X-RateLimit-* response headers to every operation callable with an API key. */
function withRateLimitHeaders<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, DocumentOperation>> }).paths ?? {};
  for (const operations of Object.values(paths)) {
    for (const operation of Object.values(operations)) {
      const via = operation['x-auth-via'];
      if (via !== 'any' && via !== 'api_key') continue;
      for (const response of Object.values(operation.responses ?? {})) {
        response.headers = { ...RATE_LIMIT_HEADERS, ...response.headers };
      }
    }
  }
  return document;
}
