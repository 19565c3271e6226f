/**
 * Request count and latency histogram per (method, route template, status), kept in plain numbers
 * and rendered in the Prometheus text format only when /metrics is scraped. prom-client's
 * `inc(labels)` / `observe(labels, v)` build and hash a label object on every call; on the hot path
 * this store does three Map lookups on strings and numbers that are the same objects request after
 * request (the method from the HTTP parser, the route template from the route), then a bucket
 * search (ADR 012). The rendered text is what prom-client printed for the same series.
 */

export const DURATION_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const REQUESTS = {
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code',
};
const DURATION = {
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency from receipt to response, by method, route template and status code',
};

interface Series {
  /** `method="GET",route="/healthz",status_code="200"`, rendered once. */
  labels: string;
  count: number;
  sum: number;
  /** Non-cumulative counts per bucket of DURATION_BUCKETS_SECONDS; the +Inf bucket is `count`. */
  buckets: Uint32Array;
}

export class RouteMetrics {
  private readonly byMethod = new Map<string, Map<string, Map<number, Series>>>();
  private readonly all: Series[] = [];

  observe(method: string, route: string, status: number, seconds: number): void {
    let byRoute = this.byMethod.get(method);
    if (byRoute === undefined) {
      byRoute = new Map();
      this.byMethod.set(method, byRoute);
    }
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) {
      byStatus = new Map();
      byRoute.set(route, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      series = {
        labels: `method="${escapeLabel(method)}",route="${escapeLabel(route)}",status_code="${status}"`,
        count: 0,
        sum: 0,
        buckets: new Uint32Array(DURATION_BUCKETS_SECONDS.length),
      };
      byStatus.set(status, series);
      this.all.push(series);
    }
    series.count += 1;
    series.sum += seconds;
    for (let i = 0; i < DURATION_BUCKETS_SECONDS.length; i++) {
      if (seconds <= (DURATION_BUCKETS_SECONDS[i] ?? Number.POSITIVE_INFINITY)) {
        series.buckets[i] = (series.buckets[i] ?? 0) + 1;
        break;
      }
    }
  }

  /** Prometheus text exposition (version 0.0.4) of both metrics, ending with a newline. */
  render(): string {
    const lines = [`# HELP ${REQUESTS.name} ${REQUESTS.help}`, `# TYPE ${REQUESTS.name} counter`];
    for (const s of this.all) lines.push(`${REQUESTS.name}{${s.labels}} ${s.count}`);
    lines.push('', `# HELP ${DURATION.name} ${DURATION.help}`, `# TYPE ${DURATION.name} histogram`);
    for (const s of this.all) {
      let cumulative = 0;
      DURATION_BUCKETS_SECONDS.forEach((le, i) => {
        cumulative += s.buckets[i] ?? 0;
        lines.push(`${DURATION.name}_bucket{le="${le}",${s.labels}} ${cumulative}`);
      });
      lines.push(`${DURATION.name}_bucket{le="+Inf",${s.labels}} ${s.count}`);
      lines.push(`${DURATION.name}_sum{${s.labels}} ${s.sum}`);
      lines.push(`${DURATION.name}_count{${s.labels}} ${s.count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

/** Label values escape backslash, double quote and newline (Prometheus text format). */
function escapeLabel(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}
