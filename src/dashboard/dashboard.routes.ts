/**
 * Serves the web dashboard at `/` beside the API (`/api/v1`): hashed assets immutable for a year,
 * `index.html` revalidated on every visit (so a deploy is picked up at once) for `/` and for any
 * other address a browser asks HTML for that no route serves (the dashboard's own pages, e.g.
 * `/geofences` or the e-mail links `/reset-password?token=…`). API clients asking for JSON still
 * get the contract's 404 body.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { contentSecurityPolicy } from './content-security-policy.ts';
import type { DashboardFiles } from './dashboard-files.ts';

export interface DashboardOptions {
  files: DashboardFiles;
  mapTileUrl: string | undefined;
  mapTileAttribution: string | undefined;
  geocoderUrl: string | undefined;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Paths that belong to the API and its documentation: never answered with the dashboard. */
const NOT_DASHBOARD = /^\/(api|docs|openapi|healthz|readyz|metrics)(\/|$)/;

export async function dashboardRoutes(app: FastifyInstance, options: DashboardOptions): Promise<void> {
  const { files } = options;
  const csp = contentSecurityPolicy(options);
  const config = JSON.stringify({
    map_tile_url: options.mapTileUrl ?? null,
    map_tile_attribution: options.mapTileAttribution ?? null,
    geocoder_url: options.geocoderUrl ?? null,
  });

  app.get('/', { schema: { hide: true } }, (_request, reply) => sendIndex(reply, files, csp));

  app.get('/config.json', { schema: { hide: true } }, (_request, reply) =>
    reply.header('cache-control', 'no-cache').type('application/json').send(config),
  );

  app.get<{ Params: { file: string } }>('/assets/:file', { schema: { hide: true } }, (request, reply) => {
    const file = files.assets.get(request.params.file);
    if (!file) return reply.status(404).send({ detail: 'Not found', error_code: 'NOT_FOUND' });
    return reply
      .header('cache-control', IMMUTABLE)
      .header('x-content-type-options', 'nosniff')
      .type(file.contentType)
      .send(file.body);
  });
}

/** True when the not-found handler should answer with the dashboard instead of a 404. */
export function wantsDashboardPage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  if (NOT_DASHBOARD.test(request.url.split('?', 1)[0] ?? '')) return false;
  return (request.headers.accept ?? '').includes('text/html');
}

export function sendIndex(reply: FastifyReply, files: DashboardFiles, csp: string): FastifyReply {
  reply
    .header('cache-control', 'no-cache')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    // Reset and invitation links carry tokens in their query: never send them on as a Referer.
    .header('referrer-policy', 'no-referrer');
  if (!files.index) {
    return reply
      .status(503)
      .type('text/html; charset=utf-8')
      .send(
        '<!doctype html><title>Dashboard not built</title><p>The dashboard is not built: run <code>npm run build:web</code> (or <code>npm start</code>, which builds it).</p>',
      );
  }
  return reply.type('text/html; charset=utf-8').send(files.index);
}
