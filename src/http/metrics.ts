/**
 * Prometheus metrics (contract §0 `/metrics`): request counts and latency histograms per route
 * template (never per concrete URL, which would explode cardinality), plus process metrics.
 * Each app owns its registry, so tests can build many apps in one process. The per-route series
 * are recorded by the request-logging hook into a `RouteMetrics` store rather than prom-client
 * metrics, which cost more per request (ADR 012); both are rendered together when scraped.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RouteMetrics } from './route-metrics.ts';

export interface HttpMetrics {
  /** Process metrics (and anything else registered with prom-client). */
  registry: Registry;
  routes: RouteMetrics;
  contentType: string;
  /** The whole exposition: process metrics, then the per-route series. */
  render(): Promise<string>;
}

export function createHttpMetrics(): HttpMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const routes = new RouteMetrics();
  return {
    registry,
    routes,
    contentType: registry.contentType,
    render: async () => `${await registry.metrics()}\n${routes.render()}`,
  };
}
