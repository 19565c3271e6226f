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
    // Security requirements and the required scope come from each route's `config.auth`.
    transform: ({ schema, url, route }) => ({
      schema: { ...schema, ...openApiAuthFields((route.config as { auth?: RouteAuth } | undefined)?.auth) },
      url,
    }),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
