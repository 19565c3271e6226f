/**
 * One structured line per request (Fastify's own two lines per request are turned off): request id,
 * route template, status, duration. Headers and bodies are never logged, so credentials cannot leak;
 * pino's redaction in `src/logger.ts` covers anything logged by hand.
 */
import type { FastifyInstance } from 'fastify';

export function registerRequestLogging(app: FastifyInstance): void {
  // Callback-style hooks: on the hot path they avoid a promise per request per hook.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('X-Request-ID', request.id);
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const entry = {
      reqId: request.id,
      method: request.method,
      route: request.routeOptions.url ?? null,
      url: request.url,
      status,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (status >= 500) request.log.error(entry, 'request failed');
    else request.log.info(entry, 'request completed');
    done();
  });
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keep a caller's X-Request-ID when it is sane, so traces join up across services. */
export function requestIdFrom(header: string | string[] | undefined, fallback: () => string): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && REQUEST_ID.test(value) ? value : fallback();
}
