/**
 * Shared pieces of the workflow tests: the delivery harness (app, user, webhook worker) plus the
 * workflow worker with the real action runtime (guarded HTTP client allowing loopback, the mailer,
 * the customer database pools), workflows created through the API, and rounds of both workers.
 */
import { after, before } from 'node:test';
import { createActionRuntime, createActionWorker, drainOutbox } from '../../src/engine.ts';
import type { ActionWorker } from '../../src/workflows/action-worker.ts';
import type { ActionRuntime } from '../../src/workflows/actions/action.ts';
import type { TestAppOptions } from '../helpers/app.ts';
import { call, expectStatus } from '../helpers/identity.ts';
import { type DeliveryHarness, startDeliveryHarness } from '../webhooks/delivery-helpers.ts';

export interface WorkflowHarness extends DeliveryHarness {
  runtime: ActionRuntime;
  actions: ActionWorker;
}

export interface ActionRunOut {
  position: number;
  type: string;
  status: 'pending' | 'success' | 'failed';
  attempt_count: number;
  response_status_code: number | null;
  error_message: string | null;
  next_retry_at: string | null;
  finished_at: string | null;
  delivery_id: string | null;
}

export interface RunOut {
  id: string;
  workflow_id: string;
  event_id: string;
  event_type: string;
  test: boolean;
  status: 'pending' | 'success' | 'failed';
  created_at: string;
  finished_at: string | null;
  actions: ActionRunOut[];
}

export interface AttemptOut {
  n: number;
  started_at: string;
  duration_ms: number;
  response_status_code: number | null;
  error_message: string | null;
  response_excerpt: string | null;
}

export type RunDetailOut = Omit<RunOut, 'actions'> & {
  actions: Array<ActionRunOut & { attempts: AttemptOut[] }>;
};

export interface WorkflowOut {
  id: string;
  name: string;
  description: string | null;
  trigger: { geofence_id: string; event_types: string[] };
  actions: Array<{ type: string; config: Record<string, unknown> }>;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  version: number;
}

/** Private targets allowed (the fakes listen on loopback); a short retry schedule unless given. */
export async function startWorkflowHarness(options: TestAppOptions = {}): Promise<WorkflowHarness> {
  const h = await startDeliveryHarness({
    ...options,
    env: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s',
      WORKFLOW_ACTION_TIMEOUT: '5s',
      ...options.env,
    },
  });
  const runtime = createActionRuntime(h.t.deps, h.dispatcher);
  const actions = createActionWorker(h.t.deps, runtime);
  const close = h.close;
  return Object.assign(h, {
    runtime,
    actions,
    close: async () => {
      await actions.stop();
      await runtime.databases.close();
      await close();
    },
  });
}

/** A harness for the tests of one `describe`; read `fixture.h` inside the tests. */
export function workflowFixture(options: TestAppOptions = {}): { h: WorkflowHarness } {
  const fixture = {} as { h: WorkflowHarness };
  before(async () => {
    fixture.h = await startWorkflowHarness(options);
  });
  after(async () => {
    await fixture.h.close();
  });
  return fixture;
}

export async function createWorkflow(
  h: WorkflowHarness,
  body: Record<string, unknown>,
): Promise<WorkflowOut> {
  const res = await call(h.t, '/workflows', { token: h.token, body: { name: 'flow', ...body } });
  return expectStatus<WorkflowOut>(res, 201, 'create workflow');
}

/** Dispatches the outbox, then runs rounds of both workers until neither has anything due now. */
export async function runDue(h: WorkflowHarness): Promise<void> {
  await drainOutbox(h.t.deps);
  for (;;) {
    const n = (await h.actions.runOnce()) + (await h.worker.runOnce());
    if (n === 0) return;
  }
}

export async function listRuns(h: WorkflowHarness, workflowId: string, query: Record<string, string> = {}) {
  return expectStatus<{ results: RunOut[]; pagination: { total: number } }>(
    await call(h.t, `/workflows/${workflowId}/runs`, { token: h.token, query }),
    200,
    'list runs',
  );
}

export async function getRun(h: WorkflowHarness, workflowId: string, runId: string): Promise<RunDetailOut> {
  return expectStatus<RunDetailOut>(
    await call(h.t, `/workflows/${workflowId}/runs/${runId}`, { token: h.token }),
    200,
    'get run',
  );
}
