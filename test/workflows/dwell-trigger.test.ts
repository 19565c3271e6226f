/**
 * Workflows triggered by `dwell` (contract §4.5, §6): a trigger naming `dwell` alone does not run
 * for the enter of a visit and runs once for its dwell, stored as the engine stores events and
 * dispatched by the real outbox dispatcher. Its `webhook` action is a `geofence.dwell` delivery with
 * the seed §6.3 payload, its `database` action writes a `geofence.dwell` row into the local
 * PostgreSQL (WORKFLOW_PG_URL, whatever TEST_DATABASE_URL says), and a test run uses a dwell.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { latestEnter, storeDwellEvent } from '../events/dwell-event.ts';
import { call, expectStatus } from '../helpers/identity.ts';
import { createWebhook, eventSource, listDeliveries, Receiver } from '../webhooks/delivery-helpers.ts';
import {
  createWorkflow,
  getRun,
  listRuns,
  runDue,
  startWorkflowHarness,
  type WorkflowHarness,
  type WorkflowOut,
} from './workflow-helpers.ts';

const PG_URL = process.env.WORKFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** A role and a schema of this name: the role's search path (`"$user"`) puts new tables there. */
const CUSTOMER = `wf_dwell_${randomBytes(6).toString('hex')}`;

function customerUrl(): string {
  const url = new URL(PG_URL);
  url.username = CUSTOMER;
  url.password = '';
  url.search = '';
  return url.toString();
}

describe('workflows triggered by dwell', () => {
  let h: WorkflowHarness;
  let receiver: Receiver;
  const admin = new pg.Client({ connectionString: PG_URL });

  before(async () => {
    h = await startWorkflowHarness();
    receiver = await Receiver.start(() => h.t.clock.now().getTime());
    await admin.connect();
    await admin.query(`create role ${CUSTOMER} login`);
    await admin.query(`create schema ${CUSTOMER} authorization ${CUSTOMER}`);
  });
  after(async () => {
    // The app first: its pools hold sessions of the customer role.
    await h.close();
    await receiver.close();
    await admin.query(`drop schema if exists ${CUSTOMER} cascade`);
    await admin.query(`drop role if exists ${CUSTOMER}`);
    await admin.end();
  });

  test('a dwell trigger runs for the dwell and not for the enter; its actions carry geofence.dwell', async () => {
    const source = await eventSource(h);
    // Subscribed to exits only: whatever reaches the receiver comes from the workflow's action.
    const hook = await createWebhook(h, { url: receiver.url, events: ['geofence.exit'] });
    const workflow = await createWorkflow(h, {
      trigger: { geofence_id: source.geofence.id, event_types: ['dwell'] },
      actions: [
        { type: 'webhook', config: { webhook_id: hook.id } },
        { type: 'database', config: { connection_url: customerUrl(), table: 'dwells' } },
      ],
    });
    assert.deepEqual(workflow.trigger.event_types, ['dwell']);

    await source.step(true);
    await runDue(h);
    assert.equal((await listRuns(h, workflow.id)).pagination.total, 0, 'no run for the enter');
    assert.equal(receiver.requests.length, 0);

    const enter = await latestEnter(h.t, h.token, source.device.id, source.geofence.id);
    const dwell = await storeDwellEvent(h.t, h.user.workspace.id, enter, 900);
    await runDue(h);

    const runs = await listRuns(h, workflow.id);
    assert.equal(runs.pagination.total, 1, 'one run for the dwell');
    const run = await getRun(h, workflow.id, runs.results[0]?.id ?? '');
    assert.equal(run.event_type, 'geofence.dwell');
    assert.equal(run.event_id, dwell.eventId);
    assert.equal(run.test, false);
    assert.equal(run.status, 'success', JSON.stringify(run.actions.map((a) => a.error_message)));

    assert.equal(receiver.requests.length, 1);
    const payload = JSON.parse(receiver.requests[0]?.body.toString('utf8') ?? 'null');
    assert.equal(payload.event, 'geofence.dwell');
    assert.equal(payload.timestamp, dwell.occurredAt.toISOString());
    assert.equal(payload.data.event_type, 'dwell');
    assert.equal(payload.data.event_id, dwell.eventId);
    assert.deepEqual(payload.data.point, enter.point);
    const [delivery] = (await listDeliveries(h, hook.id)).results;
    assert.equal(delivery?.event_type, 'geofence.dwell');

    const rows = await admin.query<{ event_id: string; event_type: string; payload: { event: string } }>(
      `select event_id, event_type, payload from ${CUSTOMER}.dwells`,
    );
    assert.deepEqual(
      rows.rows.map((r) => [r.event_id, r.event_type, r.payload.event]),
      [[dwell.eventId, 'geofence.dwell', 'geofence.dwell']],
    );
  });

  test('a trigger may name every type; a test run of a dwell trigger uses a sample dwell', async () => {
    const source = await eventSource(h, 14.4, 53.5);
    const hook = await createWebhook(h, { url: receiver.url, events: ['geofence.exit'] });
    const workflow: WorkflowOut = await createWorkflow(h, {
      trigger: { geofence_id: source.geofence.id, event_types: ['dwell', 'enter', 'exit'] },
      actions: [{ type: 'webhook', config: { webhook_id: hook.id } }],
    });
    const read = expectStatus<WorkflowOut>(
      await call(h.t, `/workflows/${workflow.id}`, { token: h.token }),
      200,
    );
    assert.deepEqual(read.trigger.event_types, ['dwell', 'enter', 'exit']);

    const before = receiver.requests.length;
    const { run_id } = expectStatus<{ run_id: string }>(
      await call(h.t, `/workflows/${workflow.id}/test`, { token: h.token, method: 'POST' }),
      202,
    );
    await runDue(h);
    const run = await getRun(h, workflow.id, run_id);
    assert.equal(run.test, true);
    assert.equal(run.event_type, 'geofence.dwell');
    assert.equal(run.status, 'success');
    const payload = JSON.parse(receiver.requests[before]?.body.toString('utf8') ?? 'null');
    assert.equal(payload.event, 'geofence.dwell');
    assert.equal(payload.data.event_type, 'dwell');
  });
});
