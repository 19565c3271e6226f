/**
 * A workflow's life (contract §6): a test run with the sample event, recorded like any other run;
 * a workflow disabled, deleted, or whose trigger geofence is deleted starts no run from then on,
 * not even for an event already waiting in the outbox; the runs list filtered by status; and the
 * actions of a deleted workflow are never attempted afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { drainOutbox } from '../../src/engine.ts';
import { FakeChatServices, SLACK_PATH } from '../helpers/fake-chat-services.ts';
import { call, expectError, expectStatus } from '../helpers/identity.ts';
import { eventSource } from '../webhooks/delivery-helpers.ts';
import {
  createWorkflow,
  getRun,
  listRuns,
  type RunOut,
  runDue,
  startWorkflowHarness,
  type WorkflowHarness,
  type WorkflowOut,
} from './workflow-helpers.ts';

const MESSAGE = '{{device.name}} {{event_type}} {{geofence.name}} test={{test}}';

describe('workflow lifecycle', () => {
  let h: WorkflowHarness;
  let fake: FakeChatServices;
  /** Each test's events come from its own geofence and device, a degree of longitude apart. */
  let place = 0;

  before(async () => {
    h = await startWorkflowHarness();
    fake = await FakeChatServices.start();
  });
  after(async () => {
    await h.close();
    await fake.close();
  });

  const slackTexts = () => fake.received.map((r) => (r.json as { text: string }).text);

  async function slackWorkflow(geofenceId: string, body: Record<string, unknown> = {}): Promise<WorkflowOut> {
    return createWorkflow(h, {
      trigger: { geofence_id: geofenceId, event_types: ['enter', 'exit'] },
      actions: [{ type: 'slack', config: { webhook_url: fake.url(SLACK_PATH), message: MESSAGE } }],
      ...body,
    });
  }

  async function source() {
    place += 2;
    return eventSource(h, place, 10);
  }

  test('a test run: 202 {run_id}, recorded with test: true and the sample event', async () => {
    fake.reset();
    const { geofence } = await source();
    const workflow = await slackWorkflow(geofence.id, {
      trigger: { geofence_id: geofence.id, event_types: ['exit'] },
    });
    const answer = expectStatus<{ run_id: string }>(
      await call(h.t, `/workflows/${workflow.id}/test`, { token: h.token, method: 'POST' }),
      202,
      'test run',
    );
    assert.deepEqual(Object.keys(answer), ['run_id']);
    const pending = await getRun(h, workflow.id, answer.run_id);
    assert.equal(pending.status, 'pending');
    assert.equal(pending.test, true);
    assert.equal(pending.event_id, `workflow_test_${Math.floor(h.t.clock.now().getTime() / 1000)}`);
    assert.equal(pending.event_type, 'geofence.exit', 'the first trigger event type');

    assert.equal(await h.actions.runOnce(), 1);
    assert.deepEqual(slackTexts(), ['Sample device exit Depot test=true']);
    const done = await getRun(h, workflow.id, answer.run_id);
    assert.equal(done.status, 'success');
    assert.equal(done.finished_at, h.t.clock.now().toISOString());
    assert.deepEqual(
      done.actions.map((a) => [a.type, a.status, a.attempt_count]),
      [['slack', 'success', 1]],
    );
    const runs = await listRuns(h, workflow.id);
    assert.deepEqual(
      runs.results.map((r) => [r.id, r.test]),
      [[answer.run_id, true]],
    );

    expectError(
      await call(h.t, '/workflows/00000000-0000-7000-8000-000000000000/test', {
        token: h.token,
        method: 'POST',
      }),
      404,
      'NOT_FOUND',
    );
  });

  test('disabled: an event waiting in the outbox starts no run; enabled again, the next one does', async () => {
    fake.reset();
    const { geofence, step } = await source();
    const workflow = await slackWorkflow(geofence.id);
    await step(true);
    await runDue(h);
    assert.equal((await listRuns(h, workflow.id)).pagination.total, 1, 'it triggers while enabled');

    await step(false);
    const off = await call(h.t, `/workflows/${workflow.id}`, {
      token: h.token,
      method: 'PATCH',
      body: { enabled: false },
    });
    assert.equal(expectStatus<WorkflowOut>(off, 200).enabled, false);
    const { runs } = await drainOutbox(h.t.deps);
    assert.equal(runs, 0, 'the exit was dispatched after the workflow was disabled');
    await runDue(h);
    assert.equal((await listRuns(h, workflow.id)).pagination.total, 1);
    assert.deepEqual(slackTexts(), ['truck enter Depot test=false']);

    expectStatus(
      await call(h.t, `/workflows/${workflow.id}`, {
        token: h.token,
        method: 'PATCH',
        body: { enabled: true },
      }),
      200,
    );
    await step(true);
    await runDue(h);
    const runsAfter = await listRuns(h, workflow.id);
    assert.equal(runsAfter.pagination.total, 2);
    assert.equal(runsAfter.results[0]?.event_type, 'geofence.enter');
    assert.deepEqual(slackTexts(), ['truck enter Depot test=false', 'truck enter Depot test=false']);
  });

  test('deleted: an event waiting in the outbox starts no run', async () => {
    fake.reset();
    const { geofence, step } = await source();
    const workflow = await slackWorkflow(geofence.id);
    // A twin on the same trigger shows the event is dispatched and would have started a run.
    const twin = await slackWorkflow(geofence.id, { name: 'twin' });
    await step(true);
    expectStatus(await call(h.t, `/workflows/${workflow.id}`, { token: h.token, method: 'DELETE' }), 204);
    assert.equal((await drainOutbox(h.t.deps)).runs, 1, 'the twin’s run alone');
    await runDue(h);
    assert.equal(fake.received.length, 1);
    assert.equal((await listRuns(h, twin.id)).pagination.total, 1);
    expectError(await call(h.t, `/workflows/${workflow.id}/runs`, { token: h.token }), 404, 'NOT_FOUND');
  });

  test('trigger geofence deleted: an event waiting in the outbox starts no run', async () => {
    fake.reset();
    const { geofence, step } = await source();
    const workflow = await slackWorkflow(geofence.id);
    await step(true);
    await runDue(h);
    assert.equal(
      (await listRuns(h, workflow.id)).pagination.total,
      1,
      'it triggers while the geofence exists',
    );

    await step(false);
    expectStatus(await call(h.t, `/geofences/${geofence.id}`, { token: h.token, method: 'DELETE' }), 204);
    assert.equal((await drainOutbox(h.t.deps)).runs, 0);
    await runDue(h);
    assert.equal((await listRuns(h, workflow.id)).pagination.total, 1);
    assert.equal(fake.received.length, 1);
  });

  test('runs listed by status', async () => {
    fake.reset();
    const { geofence, step } = await source();
    const workflow = await slackWorkflow(geofence.id);
    await step(true);
    await runDue(h);
    fake.answer(SLACK_PATH, { status: 503, body: 'busy' });
    await step(false);
    await runDue(h);
    const byStatus = async (status: string) =>
      (await listRuns(h, workflow.id, { status })).results.map((r) => [r.event_type, r.status]);
    assert.deepEqual(await byStatus('success'), [['geofence.enter', 'success']]);
    assert.deepEqual(await byStatus('pending'), [['geofence.exit', 'pending']]);
    assert.deepEqual(await byStatus('failed'), []);
    for (let n = 2; n <= 7; n++) {
      h.t.clock.advance(1000);
      await runDue(h);
    }
    await h.relogin();
    assert.deepEqual(await byStatus('pending'), []);
    assert.deepEqual(await byStatus('failed'), [['geofence.exit', 'failed']]);
    assert.equal((await listRuns(h, workflow.id)).pagination.total, 2);
    expectError(
      await call(h.t, `/workflows/${workflow.id}/runs`, { token: h.token, query: { status: 'done' } }),
      422,
      'VALIDATION_ERROR',
    );
  });

  test('deleting a workflow: its pending actions are never attempted', async () => {
    fake.reset();
    fake.answer(SLACK_PATH, { status: 500, body: 'down' });
    const { geofence, step } = await source();
    const retrying = await slackWorkflow(geofence.id, { name: 'retrying' });
    await step(true);
    await runDue(h);
    assert.equal(fake.received.length, 1, 'one attempt, a retry scheduled');
    const [run] = (await listRuns(h, retrying.id)).results as [RunOut];
    assert.equal(run.actions[0]?.status, 'pending');
    assert.ok(run.actions[0]?.next_retry_at);

    // Another workflow whose run started but whose action was never attempted.
    const fresh = await slackWorkflow(geofence.id, { name: 'fresh' });
    await step(false);
    assert.equal((await drainOutbox(h.t.deps)).runs, 2);

    for (const w of [retrying, fresh])
      expectStatus(await call(h.t, `/workflows/${w.id}`, { token: h.token, method: 'DELETE' }), 204);
    fake.answer(SLACK_PATH, { status: 200, body: 'ok' });
    for (let i = 0; i < 10; i++) {
      h.t.clock.advance(60_000);
      await runDue(h);
    }
    assert.equal(fake.received.length, 1, 'nothing attempted after the deletion');
  });
});
