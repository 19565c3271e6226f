/**
 * Builds the HTTP application from the composition root's dependencies. `server.ts` listens;
 * tests call `buildApp` and use `inject()` without a socket.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import { accountRoutes } from './account/account.routes.ts';
import { apiKeyRoutes } from './auth/api-keys.routes.ts';
import { authRoutes } from './auth/auth.routes.ts';
import { deviceTokenRoutes } from './auth/device-tokens.routes.ts';
import { registerRouteAuth } from './auth/route-auth.ts';
import { billingRoutes } from './billing/billing.routes.ts';
import { contentSecurityPolicy } from './dashboard/content-security-policy.ts';
import { dashboardRoutes, sendIndex, wantsDashboardPage } from './dashboard/dashboard.routes.ts';
import type { Deps } from './deps.ts';
import { deviceRoutes } from './devices/devices.routes.ts';
import { positionRoutes } from './devices/positions.routes.ts';
import { webhookActionDeliveries } from './engine.ts';
import { eventRoutes } from './events/events.routes.ts';
import { geofenceRoutes } from './geofences/geofences.routes.ts';
import { handleFrameworkError, registerErrorHandling } from './http/error-handler.ts';
import { registerGracefulClose } from './http/graceful-close.ts';
import { healthRoutes } from './http/health-routes.ts';
import { registerInputRules } from './http/input-rules.ts';
import { createHttpMetrics } from './http/metrics.ts';
import { API_PREFIX, registerOpenApi } from './http/openapi.ts';
import { requestIdFrom } from './http/request-id.ts';
import { registerRequestLogging } from './http/request-logging.ts';
import { RouteTable } from './http/route-table.ts';
import { registerUnreadBodyDrain } from './http/unread-body.ts';
import { createValidatorCompiler, schemaErrorFormatter } from './http/validation.ts';
import { trackerRoutes } from './ingest/ingest.routes.ts';
import { registerHistoryMergeMetrics } from './locations/history-merge-metrics.ts';
import type { CommittedIngestion } from './locations/ingest.service.ts';
import { nodeCoalescer } from './locations/ingest-coalescer.ts';
import { locationRoutes } from './locations/locations.routes.ts';
import { sessionLocationRoutes } from './locations/session-locations.routes.ts';
import { OPERATION_EXAMPLES } from './operation-examples.ts';
import { streamRoutes } from './stream/stream.routes.ts';
import { sessionRoutes } from './tracking/sessions.routes.ts';
import { deliveryRoutes } from './webhooks/deliveries.routes.ts';
import { webhookRoutes } from './webhooks/webhooks.routes.ts';
import { workflowRoutes } from './workflows/workflows.routes.ts';
import { workspaceRoutes } from './workspaces/workspaces.routes.ts';

export const BODY_LIMIT_BYTES = 1024 * 1024;

export async function buildApp(deps: Deps): Promise<FastifyInstance> {
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; the cast only widens the generic so plugins type-check.
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One line per request is written by registerRequestLogging instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    routerOptions: { ignoreTrailingSlash: true },
    // Requests arriving while closing get the contract's 503 (src/http/graceful-close.ts).
    return503OnClosing: false,
    frameworkErrors: handleFrameworkError,
  });
  app.setValidatorCompiler(createValidatorCompiler());
  app.setSchemaErrorFormatter(schemaErrorFormatter);

  const routes = new RouteTable();
  app.addHook('onRoute', (route) => routes.add(route.method, route.url));
  const csp = contentSecurityPolicy(deps.config);
  registerErrorHandling(
    app,
    (_method, url) => routes.allowedMethods(url),
    (request, reply) =>
      wantsDashboardPage(request) ? sendIndex(reply, deps.dashboardFiles, csp) : undefined,
  );
  registerInputRules(app);
  const metrics = createHttpMetrics();
  registerHistoryMergeMetrics(metrics.registry, deps.historyMerge);
  registerRequestLogging(app, metrics);
  // Before graceful close: its `Connection: close` while shutting down must win (unread-body.ts).
  registerUnreadBodyDrain(app);
  registerGracefulClose(app);
  registerRouteAuth(app, deps.identity.authenticator, API_PREFIX, deps.billing.apiKeyLimit);

  await registerOpenApi(app, deps.config.publicUrl, {
    apiKeyRateLimited: deps.billing.apiKeyLimit !== undefined,
    examples: OPERATION_EXAMPLES,
  });
  await app.register(healthRoutes, {
    ping: deps.database.ping,
    metrics,
    metricsToken: deps.config.metricsToken,
  });
  await app.register(dashboardRoutes, {
    files: deps.dashboardFiles,
    mapTileUrl: deps.config.mapTileUrl,
    mapTileAttribution: deps.config.mapTileAttribution,
    geocoderUrl: deps.config.geocoderUrl,
  });
  const { identity } = deps;
  await app.register(
    async (api) => {
      await api.register(authRoutes, {
        identity,
        limiters: deps.limiters,
        passwordResets: deps.passwordResets,
      });
      await api.register(apiKeyRoutes, {
        db: identity.db,
        clock: deps.clock,
        authenticator: identity.authenticator,
        notifier: deps.notifier,
      });
      await api.register(accountRoutes, {
        db: identity.db,
        clock: deps.clock,
        capabilities: deps.database.capabilities,
      });
      await api.register(workspaceRoutes, {
        db: identity.db,
        clock: deps.clock,
        mailer: deps.mailer,
        authenticator: identity.authenticator,
        notifier: deps.notifier,
        invitationMail: deps.limiters.invitationEmails,
        publicUrl: deps.config.publicUrl,
        geofenceIndexes: deps.geofenceIndexes,
      });
      await api.register(geofenceRoutes, {
        db: identity.db,
        capabilities: deps.database.capabilities,
        clock: deps.clock,
        registry: deps.geofenceIndexes,
        countLimit: deps.billing.countLimit,
      });
      // The location pipeline (contract §4): devices, ingestion, events, tracking sessions.
      const pipeline = {
        db: identity.db,
        clock: deps.clock,
        registry: deps.geofenceIndexes,
        capabilities: deps.database.capabilities,
        afterCommit: () => deps.signals.outbox.notify(),
        afterTimer: () => deps.signals.dwell.notify(),
        afterStaged: (count: number) => deps.historyMerge.staged(count),
        // Committed positions and events to the live stream (ADR 016).
        onCommitted: (committed: CommittedIngestion) => deps.streamPublisher.committed(committed),
        countLimit: deps.billing.countLimit,
      };
      await api.register(deviceRoutes, {
        ...pipeline,
        countLimit: deps.billing.countLimit,
        afterDelete: (deviceId: string) => identity.authenticator.forgetDevice(deviceId),
      });
      await api.register(deviceTokenRoutes, {
        db: identity.db,
        clock: deps.clock,
        authenticator: identity.authenticator,
      });
      await api.register(positionRoutes, { db: identity.db, capabilities: deps.database.capabilities });
      await api.register(streamRoutes, {
        hub: deps.stream,
        tokens: identity.tokens,
        authenticator: identity.authenticator,
        keepaliveMs: deps.config.streamKeepaliveMs,
        logger: deps.logger,
      });
      const coalescer = nodeCoalescer(pipeline);
      await api.register(locationRoutes, { ...pipeline, quota: deps.billing.eventQuota, coalescer });
      await api.register(trackerRoutes, { ...pipeline, quota: deps.billing.eventQuota, coalescer });
      await api.register(eventRoutes, pipeline);
      await api.register(sessionRoutes, pipeline);
      await api.register(sessionLocationRoutes, pipeline);
      await api.register(webhookRoutes, {
        db: identity.db,
        capabilities: deps.database.capabilities,
        clock: deps.clock,
        secretBox: deps.secretBox,
        allowPrivateTargets: deps.config.webhookAllowPrivateTargets,
        countLimit: deps.billing.countLimit,
      });
      await api.register(deliveryRoutes, {
        db: identity.db,
        capabilities: deps.database.capabilities,
        clock: deps.clock,
        signals: deps.signals,
      });
      await api.register(workflowRoutes, {
        db: identity.db,
        capabilities: deps.database.capabilities,
        clock: deps.clock,
        secretBox: deps.secretBox,
        allowPrivateTargets: deps.config.webhookAllowPrivateTargets,
        signals: deps.signals,
        webhookActions: webhookActionDeliveries(deps),
      });
      await api.register(billingRoutes, { ...deps.billing, db: identity.db, clock: deps.clock });
    },
    { prefix: API_PREFIX },
  );
  return app;
}
