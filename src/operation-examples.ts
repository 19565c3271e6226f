/**
 * The example request and answers of every operation (ADR 013), gathered from the folder of each
 * area: the composition root is the one place that knows them all, so http/ imports no domain.
 */
import { accountExamples } from './account/account.examples.ts';
import { authExamples } from './auth/auth.examples.ts';
import { deviceTokenExamples } from './auth/device-tokens.examples.ts';
import { billingExamples } from './billing/billing.examples.ts';
import { deviceExamples } from './devices/devices.examples.ts';
import { eventExamples } from './events/events.examples.ts';
import { geofenceExamples } from './geofences/geofences.examples.ts';
import type { OperationExamples } from './http/examples/operation-example.ts';
import { probeExamples } from './http/examples/probes.ts';
import { trackerExamples } from './ingest/ingest.examples.ts';
import { locationExamples } from './locations/locations.examples.ts';
import { streamExamples } from './stream/stream.examples.ts';
import { sessionExamples } from './tracking/sessions.examples.ts';
import { webhookExamples } from './webhooks/webhooks.examples.ts';
import { workflowExamples } from './workflows/workflows.examples.ts';
import { workspaceExamples } from './workspaces/workspaces.examples.ts';

export const OPERATION_EXAMPLES: OperationExamples = {
  ...probeExamples,
  ...authExamples,
  ...accountExamples,
  ...workspaceExamples,
  ...geofenceExamples,
  ...deviceExamples,
  ...locationExamples,
  ...deviceTokenExamples,
  ...trackerExamples,
  ...eventExamples,
  ...sessionExamples,
  ...streamExamples,
  ...webhookExamples,
  ...workflowExamples,
  ...billingExamples,
};
