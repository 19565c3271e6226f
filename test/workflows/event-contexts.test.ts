/**
 * A run's template context is stored once per event (migration 0017, ADR 020): an event that
 * starts three workflows writes one shared context row, and each run points at it. What each
 * action renders is exactly what the previous release rendered from the whole context it stored
 * per run (rebuilt here independently, as that release built it): the same event values, and each
 * run its own workflow, `test` flag and payload id. A run retried after its workflow and device
 * were renamed renders the values of its start; a test run renders the sample event; a run written
 * before the migration (whole context, no shared row) still runs. Contexts go with the last run
 * pointing at them (workflow deletion) and with their workspace.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { geofenceEventPayload } from '../../src/events/event-payload.ts';
import { eventNameOf } from '../../src/events/event-types.ts';
import { findEvent, type GeofenceEvent } from '../../src/events/events.repository.ts';
import { findGeofence } from '../../src/geofences/geofences.repository.ts';
import { slackText } from '../../src/workflows/actions/slack.ts';
import { devicesByIds, type TemplateDevice } from '../../src/workflows/runs.repository.ts';
import { SAMPLE_DEVICE, sampleEvent } from '../../src/workflows/sample-event.ts';
import type { TemplateContext } from '../../src/workflows/templates.ts';
import { deleteWorkspace } from '../../src/workspaces/workspaces.repository.ts';
import { FakeChatServices, SLACK_PATH } from '../helpers/fake-chat-services.ts';
import { call, expectStatus } from '../helpers/identity.ts';
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

/** Where the workflow whose action fails for good (then is retried) sends. */
const FAILING_PATH = '/services/T0001SLACK/B0009HOOK/FailingSlackToken123456';

/** Every variable a template can name (`payload_json` last: Slack cuts long texts at the end). */
const TEMPLATE = [
  '{{event}}',
  '{{event_type}}',
  '{{event_id}}',
  '{{occurred_at}}',
  '{{geofence.id}}',
  '{{geofence.name}}',
  '{{geofence.metadata.site}}',
  '{{device.id}}',
  '{{device.name}}',
  '{{device.external_id}}',
  '{{device.user_id}}',
  '{{point.lat}},{{point.lng}}',
  '{{metadata.step}}',
  '{{workflow.id}}',
  '{{workflow.name}}',
  '{{test}}',
  '{{payload_json}}',
].join('|');

/** The whole context the previous release stored with each run (its `eventContext`). */
function previousContext(
  event: GeofenceEvent,
  device: TemplateDevice | undefined,
  workflow: { id: string; name: string },
  runId: string,
  test: boolean,
): TemplateContext {
  return {
    event: eventNameOf(event.eventType),
    event_type: event.eventType,
    event_id: event.eventId,
    occurred_at: event.occurredAt.toISOString(),
    geofence: {
      id: event.geofenceId,
      name: event.geofenceName,
      metadata: event.metadata.geofence_metadata ?? {},
    },
    device: {
      id: event.deviceId,
      name: device?.name ?? event.deviceId,
      external_id: device?.externalId ?? null,
      user_id: device?.userId ?? event.userId ?? null,
      metadata: device?.metadata ?? {},
    },
    point: { lat: event.lat, lng: event.lng },
    metadata: event.metadata.event_metadata ?? {},
    workflow,
    payload_json: geofenceEventPayload(event, runId),
    test,
  };
}

/** What the previous release sent for this context (the context stored, read back). */
const sentFor = (context: TemplateContext): string =>
  slackText(TEMPLATE, JSON.parse(JSON.stringify(context)) as TemplateContext);

describe('template contexts stored once per event', () => {
  let h: WorkflowHarness;
  let fake: FakeChatServices;
  let geofenceId: string;
  let deviceId: string;
  let step: (inside: boolean) => Promise<void>;
  const flows: WorkflowOut[] = [];

  const db = () => h.t.deps.database.db;
  const workspaceId = () => h.user.workspace.id;
  const texts = (path: string): string[] =>
    fake.received.filter((r) => r.path === path).map((r) => (r.json as { text: string }).text);
  const contextRows = () =>
    db().selectFrom('workflow_event_contexts').select(['id', 'workspace_id', 'context']).execute();
  const runRows = () =>
    db()
      .selectFrom('workflow_runs')
      .select(['id', 'workflow_id', 'event_row_id', 'context', 'context_id', 'workflow_name'])
      .execute();

  before(async () => {
    h = await startWorkflowHarness();
    fake = await FakeChatServices.start();
    const source = await eventSource(h);
    geofenceId = source.geofence.id;
    deviceId = source.device.id;
    step = source.step;
    for (const [name, path] of [
      ['Notify dispatch', SLACK_PATH],
      ['Log arrival', SLACK_PATH],
      ['Page the yard', FAILING_PATH],
    ] as const) {
      flows.push(
        await createWorkflow(h, {
          name,
          trigger: { geofence_id: geofenceId, event_types: ['enter'] },
          actions: [{ type: 'slack', config: { webhook_url: fake.url(path), message: TEMPLATE } }],
        }),
      );
    }
  });
  after(async () => {
    await h?.close();
    await fake?.close();
  });

  test('an event matching three workflows: one context row, three runs, each rendering as before', async () => {
    fake.answer(FAILING_PATH, { status: 500, body: 'down' });
    await step(true);
    await runDue(h);

    const contexts = await contextRows();
    assert.equal(contexts.length, 1, 'one context row for the event');
    const [shared] = contexts;
    assert.ok(shared);
    assert.equal(shared.workspace_id, workspaceId());
    const runs = await runRows();
    assert.equal(runs.length, 3, 'a run per workflow');
    for (const r of runs) {
      assert.equal(r.context, null, 'no whole context on the run');
      assert.equal(r.context_id, shared.id, 'every run points at the one context');
    }
    assert.deepEqual(runs.map((r) => r.workflow_name).sort(), flows.map((f) => f.name).sort());

    const eventRowId = runs[0]?.event_row_id;
    assert.ok(eventRowId);
    const event = await findEvent(db(), workspaceId(), eventRowId);
    assert.ok(event);
    const device = (await devicesByIds(db(), [deviceId])).get(deviceId);
    const expected = (flow: WorkflowOut) => {
      const run = runs.find((r) => r.workflow_id === flow.id);
      assert.ok(run);
      return sentFor(previousContext(event, device, { id: flow.id, name: flow.name }, run.id, false));
    };
    const [notify, log, page] = flows as [WorkflowOut, WorkflowOut, WorkflowOut];
    assert.deepEqual(texts(SLACK_PATH).sort(), [expected(notify), expected(log)].sort());
    assert.equal(texts(FAILING_PATH)[0], expected(page), 'the failing action rendered the same way');
    // The event's values are there, and each run's own.
    assert.match(expected(notify), /\|truck\|/);
    assert.match(expected(notify), /\|Depot\|north\|/);
    assert.match(expected(log), /\|Log arrival\|false\|/);
    assert.notEqual(expected(notify), expected(log));
  });

  test('a run retried after its workflow and device were renamed renders the values of its start', async () => {
    const page = flows[2] as WorkflowOut;
    const [run] = (await listRuns(h, page.id)).results as [RunOut];
    // Attempts 2..7, one second apart (the harness's schedule), all failing.
    for (let n = 2; n <= 7; n++) {
      h.t.clock.advance(1000);
      assert.equal(await h.actions.runOnce(), 1, `attempt ${n}`);
    }
    await h.relogin();
    assert.equal((await getRun(h, page.id, run.id)).status, 'failed');
    const before = texts(FAILING_PATH);
    assert.equal(before.length, 7);
    assert.equal(new Set(before).size, 1, 'every attempt rendered the same text');

    expectStatus(
      await call(h.t, `/workflows/${page.id}`, {
        token: h.token,
        method: 'PATCH',
        body: { name: 'Page the yard (renamed)' },
      }),
      200,
      'rename the workflow',
    );
    expectStatus(
      await call(h.t, `/devices/${deviceId}`, { token: h.token, method: 'PATCH', body: { name: 'lorry' } }),
      200,
      'rename the device',
    );
    fake.answer(FAILING_PATH, { status: 200, body: 'ok' });
    expectStatus(
      await call(h.t, `/workflows/${page.id}/runs/${run.id}/retry`, { token: h.token, method: 'POST' }),
      202,
      'retry',
    );
    await runDue(h);
    const after = texts(FAILING_PATH);
    assert.equal(after.length, 8, 'the retry attempted once');
    assert.equal(after[7], before[0], 'the retry rendered what the first attempt did');
    assert.match(after[7] as string, /\|Page the yard\|/);
    assert.equal((await getRun(h, page.id, run.id)).status, 'success');
    assert.equal((await contextRows()).length, 1, 'a retry writes no context');
  });

  test('a test run gets a context of its own and renders the sample event as before', async () => {
    const notify = flows[0] as WorkflowOut;
    const sentBefore = texts(SLACK_PATH).length;
    const now = h.t.clock.now();
    const { run_id: runId } = expectStatus<{ run_id: string }>(
      await call(h.t, `/workflows/${notify.id}/test`, { token: h.token, method: 'POST' }),
      202,
      'test run',
    );
    await runDue(h);
    const geofence = await findGeofence(db(), workspaceId(), geofenceId);
    assert.ok(geofence);
    const trigger = { workspaceId: workspaceId(), geofenceId, eventTypes: ['enter' as const] };
    // The sample event's row ids appear in no template value.
    const event = sampleEvent(trigger, geofence, now, { id: 'unused', locationId: 'unused' });
    const expected = sentFor(
      previousContext(event, SAMPLE_DEVICE, { id: notify.id, name: notify.name }, runId, true),
    );
    const sent = texts(SLACK_PATH).slice(sentBefore);
    assert.deepEqual(sent, [expected]);
    assert.match(expected, /\|Sample device\|.*\|true\|/);

    const run = (await runRows()).find((r) => r.id === runId);
    assert.ok(run?.context_id);
    assert.equal(run.context, null);
    assert.equal((await contextRows()).length, 2, 'the test run’s own context');
  });

  test('a run written before the migration (whole context, no shared row) still runs', async () => {
    const notify = flows[0] as WorkflowOut;
    const model = await db()
      .selectFrom('workflow_action_runs')
      .select(['action'])
      .where('workflow_id', '=', notify.id)
      .executeTakeFirstOrThrow();
    const event = (await findEvent(
      db(),
      workspaceId(),
      (await runRows()).find((r) => r.event_row_id !== null)?.event_row_id ?? '',
    )) as GeofenceEvent;
    const oldRunId = '01900000-0000-7000-8000-0000000001d5';
    const old = previousContext(
      {
        ...event,
        eventId: 'an-event-of-the-previous-release',
        metadata: { ...event.metadata, event_metadata: { step: 99 } },
      },
      { id: deviceId, name: 'old truck', externalId: 'T-1', userId: 'driver-0', metadata: {} },
      { id: notify.id, name: 'Its name back then' },
      oldRunId,
      false,
    );
    const now = h.t.clock.now();
    await db()
      .insertInto('workflow_runs')
      .values({
        id: oldRunId,
        workspace_id: workspaceId(),
        workflow_id: notify.id,
        origin: 'event',
        event_row_id: null,
        event_id: old.event_id,
        event_type: old.event,
        context: JSON.stringify(old),
        context_id: null,
        workflow_name: null,
        status: 'pending',
        created_at: now,
        finished_at: null,
      })
      .execute();
    await db()
      .insertInto('workflow_action_runs')
      .values({
        id: '01900000-0000-7000-8000-0000000004d5',
        run_id: oldRunId,
        workspace_id: workspaceId(),
        workflow_id: notify.id,
        position: 0,
        type: 'slack',
        action: model.action,
        delivery_id: null,
        status: 'pending',
        attempt_count: 0,
        response_status_code: null,
        error_message: null,
        created_at: now,
        finished_at: null,
        next_retry_at: null,
        due_at: now,
        lease_owner: null,
        started_at: null,
        duration_ms: null,
        response_excerpt: null,
      })
      .execute();
    const sentBefore = texts(SLACK_PATH).length;
    await runDue(h);
    const sent = texts(SLACK_PATH).slice(sentBefore);
    assert.deepEqual(sent, [sentFor(old)]);
    assert.match(sent[0] as string, /\|old truck\|T-1\|driver-0\|.*\|99\|.*\|Its name back then\|/);
    assert.equal((await getRun(h, notify.id, oldRunId)).status, 'success');
  });

  test('a context goes with the last run pointing at it, and with its workspace', async () => {
    const [notify, log, page] = flows as [WorkflowOut, WorkflowOut, WorkflowOut];
    const eventContextId = (await runRows()).find((r) => r.workflow_id === log.id)?.context_id;
    assert.ok(eventContextId);
    const remove = async (flow: WorkflowOut) =>
      expectStatus(
        await call(h.t, `/workflows/${flow.id}`, { token: h.token, method: 'DELETE' }),
        204,
        'delete workflow',
      );
    const ids = async () => (await contextRows()).map((c) => c.id);

    // `notify` has the event's run, its test run's (own context) and the old run (none).
    await remove(notify);
    assert.deepEqual(await ids(), [eventContextId], 'the test run’s context went; the shared one stays');
    await remove(log);
    assert.deepEqual(await ids(), [eventContextId], 'still used by the third run');
    await remove(page);
    assert.deepEqual(await ids(), [], 'the last run gone, its context went');

    // A new event, then the workspace deleted with its runs and their context.
    const survivor = await createWorkflow(h, {
      name: 'Survivor',
      trigger: { geofence_id: geofenceId, event_types: ['exit'] },
      actions: [{ type: 'slack', config: { webhook_url: fake.url(SLACK_PATH), message: TEMPLATE } }],
    });
    await step(false);
    await runDue(h);
    assert.equal((await listRuns(h, survivor.id)).results.length, 1);
    assert.equal((await ids()).length, 1);
    await deleteWorkspace(db(), workspaceId());
    assert.deepEqual(await ids(), []);
    assert.deepEqual(await runRows(), []);
  });
});
