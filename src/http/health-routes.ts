/** Probes (contract §0): liveness, readiness (database reachable) and Prometheus metrics. */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { NotAuthenticatedError } from '../shared/errors.ts';
import { safeEqual } from '../shared/secrets.ts';
import type { HttpMetrics } from './metrics.ts';
import { errorResponses, StringEnum } from './schemas.ts';

export interface HealthDeps {
  ping(): Promise<boolean>;
  metrics: HttpMetrics;
  metricsToken: string | undefined;
}

const HealthBody = Type.Object({ status: StringEnum(['ok']) });
const ReadyBody = Type.Object({
  status: StringEnum(['ready', 'unavailable']),
  database: StringEnum(['up', 'down']),
});

export async function healthRoutes(app: FastifyInstance, deps: HealthDeps): Promise<void> {
  app.get(
    '/healthz',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getHealth',
        tags: ['probes'],
        summary: 'Liveness: the process is up',
        response: { 200: HealthBody },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getReadiness',
        tags: ['probes'],
        summary: 'Readiness: the database answers',
        response: { 200: ReadyBody, 503: ReadyBody },
      },
    },
    async (_request, reply) => {
      const up = await deps.ping();
      return reply.status(up ? 200 : 503).send({
        status: up ? ('ready' as const) : ('unavailable' as const),
        database: up ? ('up' as const) : ('down' as const),
      });
    },
  );

  app.get(
    '/metrics',
    {
      config: { auth: 'public' },
      schema: {
        operationId: 'getMetrics',
        tags: ['probes'],
        summary: 'Prometheus metrics (needs Authorization: Bearer <METRICS_TOKEN> when that is set)',
        produces: ['text/plain'],
        response: {
          200: Type.String({ description: 'Prometheus text exposition format' }),
          ...errorResponses(401),
        },
      },
    },
    async (request, reply) => {
      if (
        deps.metricsToken !== undefined &&
        !safeEqual(request.headers.authorization ?? '', `Bearer ${deps.metricsToken}`)
      ) {
        throw new NotAuthenticatedError();
      }
      const text = await deps.metrics.render();
      return reply.type(deps.metrics.contentType).send(text);
    },
  );
}
