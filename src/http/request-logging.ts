/**
 * One structured line per request (Fastify's own two lines per request are turned off): request id,
 * route template, status, duration; the same hook records the request in the per-route metrics.
 * Headers and bodies are never logged, nor a `token` in the query, so credentials cannot leak;
 * pino's redaction in `src/logger.ts` covers anything logged by hand. A route declaring
 * `config.logQueryValues: false` (the tracker routes, whose query is a person's position) has its
 * query logged by parameter names only.
 */
import type { FastifyInstance } from 'fastify';
import type { HttpMetrics } from './metrics.ts';
import { logRequest, type RequestLogEntry } from './request-log-line.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the request log names the query's parameters but not their values. */
    logQueryValues?: boolean;
  }
}

export function registerRequestLogging(app: FastifyInstance, metrics: HttpMetrics): void {
  // Decided when each route is added (no request reads its route's config, ADR 012).
  const quietQueries = new Set<string>();
  app.addHook('onRoute', (route) => {
    if ((route.config as { logQueryValues?: boolean } | undefined)?.logQueryValues === false) {
      quietQueries.add(route.url);
    }
  });
  // Callback-style hooks: on the hot path they avoid a promise per request per hook.
  // The header is set as the request arrives rather than in onSend: a header set early survives every
  // later path (401 from route auth, 4xx from parsing, the error handler), and one onSend hook fewer
  // runs per request (ADR 012).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-ID', request.id);
    done();
  });
  // One hook for the log line and the metrics: `routeOptions` is a getter that builds an object
  // (and asks the router about constraints) on every read, and the clock is read once.
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const route = request.routeOptions.url;
    const elapsedMs = reply.elapsedTime;
    metrics.routes.observe(request.method, route ?? 'unmatched', status, elapsedMs / 1000);
    // `reqId` is in the request logger's bindings (Fastify's child logger), so it is not repeated here.
    const entry: RequestLogEntry = {
      method: request.method,
      route: route ?? null,
      url:
        route !== undefined && quietQueries.has(route)
          ? withoutQueryValues(request.url)
          : withoutToken(request.url),
      status,
      durationMs: Math.round(elapsedMs * 100) / 100,
    };
    logRequest(request.log, entry);
    done();
  });
}

/**
 * A `token` query parameter is a credential (a stream token, ADR 016; a tracker's device token or
 * API key, ADR 021): it is not written to logs. The name is matched as the query parser reads it,
 * percent-decoded (`tok%65n=` is `token=` to the server, so it is to the redaction too).
 */
export function withoutToken(url: string): string {
  const query = url.indexOf('?');
  // Most URLs have no query, or none that could name a token: returned as they are.
  if (query < 0 || !/token|%/.test(url.slice(query))) return url;
  return redactQuery(url, query, (name) => decodedName(name) === 'token');
}

/** The URL with every query value replaced: `?id=[redacted]&lat=[redacted]…`. */
export function withoutQueryValues(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : redactQuery(url, query, () => true);
}

/** `name=[redacted]` for each parameter (of the query starting at `query`) whose name `redacts`. */
function redactQuery(url: string, query: number, redacts: (name: string) => boolean): string {
  const parts = url
    .slice(query + 1)
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      const name = equals < 0 ? part : part.slice(0, equals);
      return redacts(name) ? `${name}=[redacted]` : part;
    });
  return `${url.slice(0, query + 1)}${parts.join('&')}`;
}

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}
