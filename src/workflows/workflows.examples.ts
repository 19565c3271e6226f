/** Examples of /workflows and their runs (contract §6). */
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { ids, listOf } from '../http/examples/records.ts';

const workflowId = '0197a0c2-3b1e-772f-8b0c-91a1b1c1d1e1';
const runId = '0197a0c2-3b1f-7830-9c1d-a1b1c1d1e1f1';
const CREATED = '2026-03-10T12:00:00.000Z';
const FIRED = '2026-03-10T12:10:00.120Z';
const DONE = '2026-03-10T12:10:00.480Z';

const actionsIn = [
  {
    type: 'slack',
    config: {
      webhook_url: 'https://hooks.slack.com/services/T0001/B0002/abcdefghijklmnopqrstuvwx',
      message: ':truck: {{device.name}} entered {{geofence.name}} at {{occurred_at}}',
    },
  },
  {
    type: 'sms',
    config: {
      to: '+14155550123',
      from: '+14155550100',
      account_sid: 'AC0123456789abcdef0123456789abcdef',
      auth_token: 'a1b2c3d4e5f60718293a4b5c6d7e8f90',
      body: '{{device.name}} is at {{geofence.name}}',
    },
  },
  {
    type: 'database',
    config: {
      connection_url: 'postgres://warehouse:s3cret-pass@db.example.com:5432/ops',
      table: 'geofence_events',
    },
  },
  { type: 'webhook', config: { webhook_id: ids.webhook } },
];

const actionsOut = [
  {
    type: 'slack',
    config: {
      webhook_url: 'https://hooks.slack.com/…uvwx',
      message: ':truck: {{device.name}} entered {{geofence.name}} at {{occurred_at}}',
    },
  },
  {
    type: 'sms',
    config: {
      to: '+14155550123',
      from: '+14155550100',
      account_sid: 'AC0123456789abcdef0123456789abcdef',
      auth_token: '…8f90',
      body: '{{device.name}} is at {{geofence.name}}',
    },
  },
  {
    type: 'database',
    config: { connection_url: 'postgres://warehouse:…@db.example.com:5432/ops', table: 'geofence_events' },
  },
  { type: 'webhook', config: { webhook_id: ids.webhook } },
];

const workflow = {
  id: workflowId,
  name: 'Truck 7 at the depot',
  description: 'Tell the dispatcher and log the arrival',
  trigger: { geofence_id: ids.geofence, event_types: ['enter'] },
  actions: actionsOut,
  enabled: true,
  created_at: CREATED,
  updated_at: CREATED,
  version: 1,
};

const actionRun = (position: number, type: string, extra: Record<string, unknown> = {}) => ({
  position,
  type,
  status: 'success',
  attempt_count: 1,
  response_status_code: type === 'database' ? null : 200,
  error_message: null,
  next_retry_at: null,
  finished_at: DONE,
  delivery_id: null,
  ...extra,
});

const run = {
  id: runId,
  workflow_id: workflowId,
  event_id: `${ids.geofence}_enter_1773144600`,
  event_type: 'geofence.enter',
  test: false,
  status: 'success',
  created_at: FIRED,
  finished_at: DONE,
  actions: [
    actionRun(0, 'slack'),
    actionRun(1, 'sms', { response_status_code: 201 }),
    actionRun(2, 'database'),
    actionRun(3, 'webhook', { delivery_id: ids.delivery }),
  ],
};

const attempt = (excerpt: string, status: number | null) => [
  {
    n: 1,
    started_at: FIRED,
    duration_ms: 84.2,
    response_status_code: status,
    error_message: null,
    response_excerpt: excerpt,
  },
];

export const workflowExamples: OperationExamples = {
  'POST /api/v1/workflows': {
    request: {
      name: workflow.name,
      description: workflow.description,
      trigger: workflow.trigger,
      actions: actionsIn,
    },
    responses: { 201: workflow },
  },
  'GET /api/v1/workflows': { responses: { 200: listOf(workflow) } },
  'GET /api/v1/workflows/{workflow_id}': { responses: { 200: workflow } },
  'PATCH /api/v1/workflows/{workflow_id}': {
    request: { enabled: false },
    responses: { 200: { ...workflow, enabled: false, updated_at: '2026-03-10T12:05:00.000Z', version: 2 } },
  },
  'DELETE /api/v1/workflows/{workflow_id}': { responses: {} },
  'GET /api/v1/workflows/{workflow_id}/runs': { responses: { 200: listOf(run) } },
  'GET /api/v1/workflows/{workflow_id}/runs/{run_id}': {
    responses: {
      200: {
        ...run,
        actions: [
          { ...actionRun(0, 'slack'), attempts: attempt('ok', 200) },
          {
            ...actionRun(1, 'sms', { response_status_code: 201 }),
            attempts: attempt('{"sid":"SM0123","status":"queued"}', 201),
          },
          { ...actionRun(2, 'database'), attempts: attempt('{"table":"geofence_events","id":"42"}', null) },
          {
            ...actionRun(3, 'webhook', { delivery_id: ids.delivery }),
            attempts: attempt('{"received":true}', 200),
          },
        ],
      },
    },
  },
  'POST /api/v1/workflows/{workflow_id}/test': { responses: { 202: { run_id: runId } } },
  'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/retry': {
    responses: {
      202: {
        ...run,
        status: 'pending',
        finished_at: null,
        actions: [
          actionRun(0, 'slack'),
          actionRun(1, 'sms', {
            status: 'pending',
            attempt_count: 0,
            response_status_code: null,
            finished_at: null,
          }),
          actionRun(2, 'database'),
          actionRun(3, 'webhook', { delivery_id: ids.delivery }),
        ],
      },
    },
  },
};
