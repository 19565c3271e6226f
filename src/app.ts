/**
 * Builds the HTTP application from the composition root's dependencies. `server.ts` listens;
 * tests call `buildApp` and use `inject()` without a socket.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { accountRoutes } from './account/account.routes.ts';
import { apiKeyRoutes } from './auth/api-keys.routes.ts';
import { authRoutes } from './auth/auth.routes.ts';
import { registerRouteAuth } from './auth/route-auth.ts';
import type { Deps } from './deps.ts';
import { deviceRoutes } from './devices/devices.routes.ts';
import { eventRoutes } from './events/events.routes.ts';
import { geofenceRoutes } from './geofences/geofences.routes.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { registerGracefulClose } from './http/graceful-close.ts';
import { healthRoutes } from './http/health-routes.ts';
import { registerHttpMetrics } from './http/metrics.ts';
import { API_PREFIX, registerOpenApi } from './http/openapi.ts';
import { registerRequestLogging, requestIdFrom } from './http/request-logging.ts';
import { RouteTable } from './http/route-table.ts';
import { createValidatorCompiler } from './http/validation.ts';
import { locationRoutes } from './locations/locations.routes.ts';
import { uuidv7 } from './shared/ids.ts';
import { sessionRoutes } from './tracking/sessions.routes.ts';
import { workspaceRoutes } from './workspaces/workspaces.routes.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; the cast only widens the generic so plugins type-check.
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request is written by registerRequestLogging instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id'], uuidv7),
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: true,
  });
  app.setValidatorCompiler(createValidatorCompiler());

  const routes = new RouteTable();
  app.addHook('onRoute', (route) => routes.add(route.method, route.url));
  registerErrorHandling(app, (_method, url) => routes.allowedMethods(url));
  registerRequestLogging(app);
  registerGracefulClose(app);
  registerRouteAuth(app, deps.identity.authenticator, API_PREFIX);
  const metrics = registerHttpMetrics(app);

  await registerOpenApi(app, deps.config.publicUrl);
  await app.register(healthRoutes, {
    ping: deps.database.ping,
    metrics,
    metricsToken: deps.config.metricsToken,
  });
  const { identity } = deps;
  await app.register(
    async (api) => {
      await api.register(authRoutes, { identity, limiters: deps.limiters });
      await api.register(apiKeyRoutes, {
        db: identity.db,
        clock: deps.clock,
        authenticator: identity.authenticator,
        notifier: deps.notifier,
      });
      await api.register(accountRoutes, { db: identity.db, clock: deps.clock });
      await api.register(workspaceRoutes, {
        db: identity.db,
        clock: deps.clock,
        mailer: deps.mailer,
        authenticator: identity.authenticator,
        publicUrl: deps.config.publicUrl,
      });
      await api.register(geofenceRoutes, {
        db: identity.db,
        clock: deps.clock,
        registry: deps.geofenceIndexes,
      });
      // The location pipeline (contract §4): devices, ingestion, events, tracking sessions.
      const pipeline = {
        db: identity.db,
        clock: deps.clock,
        registry: deps.geofenceIndexes,
        capabilities: deps.database.capabilities,
      };
      await api.register(deviceRoutes, pipeline);
      await api.register(locationRoutes, pipeline);
      await api.register(eventRoutes, pipeline);
      await api.register(sessionRoutes, pipeline);
    },
    { prefix: API_PREFIX },
  );
  return app;
}
