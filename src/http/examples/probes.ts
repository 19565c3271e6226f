/** Examples of the probes (contract §0). */
import type { OperationExamples } from './operation-example.ts';

export const probeExamples: OperationExamples = {
  'GET /healthz': { responses: { 200: { status: 'ok' } } },
  'GET /readyz': {
    responses: { 200: { status: 'ready', database: 'up' }, 503: { status: 'unavailable', database: 'down' } },
  },
  'GET /metrics': {
    responses: {
      200:
        '# HELP http_requests_total HTTP requests answered\n# TYPE http_requests_total counter\n' +
        'http_requests_total{method="GET",route="/api/v1/geofences",status="200"} 42\n',
    },
  },
};
