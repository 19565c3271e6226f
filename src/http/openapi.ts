/**
 * The OpenAPI 3.0 document is generated from the route schemas (`@fastify/swagger`), served at
 * `/openapi/openapi.json`, and browsable at `/docs` (Swagger UI from the installed package: no
 * internet needed). Registered before any route so every route is collected. What the document
 * adds to the route schemas (named components, common error responses, examples) is ADR 013.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { ComponentCatalogue } from './component-catalogue.ts';
import { withEntityTagHeaders } from './entity-tag-headers.ts';
import type { OperationExamples } from './examples/operation-example.ts';
import { withOperationExamples } from './operation-examples.ts';
import { withRateLimitHeaders } from './rate-limit-headers.ts';
import { type DocumentationSettings, documentedSchema } from './route-documentation.ts';

export const API_PREFIX = '/api/v1';

const DESCRIPTION = `Self-hosted geofencing service. Devices report locations; the service detects when they enter
or leave polygon and circle geofences (or stay in one for its \`dwell_seconds\`), records the events and
delivers them as signed webhooks.

Conventions (contract §1): JSON in and out; errors are \`{detail, error_code?, details?}\`; schema
failures are 422 with \`detail\` an array of \`{type, loc, msg}\`; malformed JSON is 400; lists take
\`offset\`/\`limit\` (1..200, default 50) and answer \`{results, pagination}\`; ids are UUIDv7;
timestamps are ISO 8601 UTC. Every operation has an \`operationId\` (camelCase verb + resource, e.g.
\`createGeofence\`) for generated clients, and states the scope it needs (\`x-required-scope\`), the one the
server enforces. On \`/workspaces/{workspace_id}\` routes a signed-in user acts with its role in that
workspace (\`x-required-role\`) instead of its token's scopes.

Resources are named schemas under \`components/schemas\` (Geofence, Device, Event, Webhook, Error…),
so a generated client has a type for each. Every operation lists the errors it can answer: those of
its own logic and the common ones of its kind: 400 for a malformed JSON body, 401/403 from its
credentials and scope, 404 for a resource in its path, 413 over the body limit (1 MiB, 5 MiB for
\`POST /locations/batch\` and \`POST /geofences/batch\`), 415 for a body that is not JSON, 422 for schema failures, 429 over an API
key's hourly budget, 500. Every operation shows an example request and answer.

A client still sending a body when the answer comes (a 413, or a 401 before the body is read) can
finish sending and read it: the server reads and discards the rest of the body, up to 4× the route's
limit, and keeps the connection; past that it closes its side after the answer and still reads
for a few seconds before it lets go, so the answer is not lost to a reset.`;

export interface OpenApiOptions {
  /** API keys are counted against their plan's hourly budget, so their routes can answer 429. */
  apiKeyRateLimited: boolean;
  /** Each operation's example request and answers, by `METHOD /path` (src/operation-examples.ts). */
  examples: OperationExamples;
}

export async function registerOpenApi(
  app: FastifyInstance,
  publicUrl: string,
  options: OpenApiOptions,
): Promise<void> {
  const settings: DocumentationSettings = {
    bodyLimit: app.initialConfig.bodyLimit ?? 1024 * 1024,
    apiKeyRateLimited: options.apiKeyRateLimited,
  };
  // The components are collected as routes are added: @fastify/swagger converts `components.schemas`
  // before it documents the routes, so they must all be known by then.
  const catalogue = new ComponentCatalogue();
  app.addHook('onRoute', (route) => {
    documentedSchema(route, settings, catalogue);
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Geofencing Service API', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: publicUrl, description: 'This server; API paths carry the /api/v1 version prefix' }],
      components: {
        schemas: catalogue.schemas as Record<string, never>,
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
          deviceToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'Device token (gf_dev_…)',
            description:
              "A device token (POST /devices/{device_id}/tokens), as Authorization: Bearer or X-API-Key: writes that device's locations only",
          },
          trackerBasic: {
            type: 'http',
            scheme: 'basic',
            description:
              'Tracker routes only: HTTP Basic credentials whose password is a device token or an API key (the user name is free)',
          },
          trackerUrlToken: {
            type: 'apiKey',
            in: 'query',
            name: 'token',
            description:
              'Tracker routes only, for apps that cannot set headers: a device token or an API key as the `token` query parameter (never logged unredacted)',
          },
          streamToken: {
            type: 'apiKey',
            in: 'query',
            name: 'token',
            description:
              'GET /stream only: a 60-second token from POST /stream/tokens (EventSource sends no headers)',
          },
        },
      },
    },
    // Rate-limit headers (contract §7), entity tags and the examples are added to the finished document.
    transformObject: (documentObject) =>
      'openapiObject' in documentObject
        ? withOperationExamples(
            withEntityTagHeaders(withRateLimitHeaders(documentObject.openapiObject)),
            options.examples,
          )
        : documentObject.swaggerObject,
    // Security, scope, common errors and component references come from the route (ADR 013).
    transform: ({ url, route }) => ({ schema: documentedSchema(route, settings, catalogue), url }),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/openapi/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
