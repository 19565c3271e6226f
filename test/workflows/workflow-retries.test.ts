/**
 * Retries of workflow actions (contract §6) with the manual clock and a real failing target: a
 * Slack webhook answering 500 beside a Discord one that works. The failing action is attempted
 * exactly seven times, each at its due time and not a millisecond before, while its sibling is
 * delivered once; the run stays `pending` with the next retry and the last error, then `failed`,
 * with every attempt in the run's detail and a notification for the workspace owner. A retry
 * queues the failed action again with a fresh count (with the workflow's current config), and
 * succeeds once the target recovers. The real default schedule is followed once end to end. And
 * targets that quote the Slack URL's path or the Twilio token back never get them into an answer
 * or a log line.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DISCORD_PATH, FakeChatServices, SLACK_PATH } from '../helpers/fake-chat-services.ts';
import { FakeTwilio } from '../helpers/fake-twilio.ts';
import { type CallOptions, call, expectError, expectStatus } from '../helpers/identity.ts';
import { eventSource } from '../webhooks/delivery-helpers.ts';
import {
  createWorkflow,
  getRun,
  listRuns,
  type RunDetailOut,
  type RunOut,
  runDue,
  startWorkflowHarness,
  type WorkflowHarness,
} from './workflow-helpers.ts';

const SECOND = 1000;
const MIN = 60 * SECOND;
/** Seed §6.4: total time elapsed at attempts 1..7 under the default schedule. */
const DEFAULT_OFFSETS = [0, 15, 45, 105, 345, 585, 825].map((m) => m * MIN);
/** Another Slack webhook of the same workspace: where a corrected config points. */
const FIXED_SLACK_PATH = '/services/T0001SLACK/B0003HOOK/AnotherSlackToken987654';

const SLACK_DOWN = { status: 500, body: 'slack is having a moment' };

function actionOf<A extends { type: string }>(run: { actions: A[] }, type: string): A {
  const action = run.actions.find((a) => a.type === type);
  assert.ok(action, `the run has a ${type} action`);
  return action;
}

async function onlyRun(
  h: WorkflowHarness,
  workflowId: string,
  known: readonly string[] = [],
): Promise<RunOut> {
  const fresh = (await listRuns(h, workflowId)).results.filter((r) => !known.includes(r.id));
  assert.equal(fresh.length, 1, 'one new run');
  return fresh[0] as RunOut;
}

/**
 * Attempts 2..7 of the failing action: at each due time minus a millisecond nothing is attempted,
 * at the due time exactly one attempt is. `dueAfter(n)` is the delay before attempt n.
 */
async function failUntilExhausted(
  h: WorkflowHarness,
  workflowId: string,
  runId: string,
  dueAfter: (n: number) => number,
  check?: (run: RunDetailOut, n: number, due: number) => void,
): Promise<void> {
  for (let n = 2; n <= 7; n++) {
    const delay = dueAfter(n);
    const due = h.t.clock.now().getTime() + delay;
    await h.relogin();
    check?.(await getRun(h, workflowId, runId), n, due);
    h.t.clock.advance(delay - 1);
    assert.equal(await h.actions.runOnce(), 0, `attempt ${n} not made a millisecond early`);
    h.t.clock.advance(1);
    assert.equal(await h.actions.runOnce(), 1, `attempt ${n} made on time`);
  }
}

describe('workflow action retries (1 s schedule)', () => {
  let h: WorkflowHarness;
  let fake: FakeChatServices;
  let geofenceId: string;
  let step: (inside: boolean) => Promise<void>;

  before(async () => {
    h = await startWorkflowHarness();
    fake = await FakeChatServices.start();
    const source = await eventSource(h);
    geofenceId = source.geofence.id;
    step = source.step;
  });
  after(async () => {
    await h.close();
    await fake.close();
  });

  const slackRequests = (path = SLACK_PATH) => fake.received.filter((r) => r.path === path);

  test('seven attempts at their due times, the sibling once; failed, notified; a retry succeeds', async () => {
    fake.answer(SLACK_PATH, SLACK_DOWN);
    const workflow = await createWorkflow(h, {
      name: 'Notify dispatch',
      trigger: { geofence_id: geofenceId, event_types: ['enter'] },
      actions: [
        { type: 'slack', config: { webhook_url: fake.url(SLACK_PATH) } },
        { type: 'discord', config: { webhook_url: fake.url(DISCORD_PATH) } },
      ],
    });
    const start = h.t.clock.now().getTime();
    await step(true);
    await runDue(h);
    const run = await onlyRun(h, workflow.id);
    assert.equal(slackRequests().length, 1);
    assert.equal(fake.accepted('discord').length, 1);

    await failUntilExhausted(
      h,
      workflow.id,
      run.id,
      () => SECOND,
      (detail, n, due) => {
        assert.equal(detail.status, 'pending', `the run is pending before attempt ${n}`);
        assert.equal(detail.finished_at, null);
        const slack = actionOf(detail, 'slack');
        assert.equal(slack.status, 'pending');
        assert.equal(slack.attempt_count, n - 1);
        assert.equal(slack.next_retry_at, new Date(due).toISOString(), `attempt ${n} scheduled`);
        assert.equal(slack.response_status_code, 500);
        assert.equal(
          slack.error_message,
          'Slack answered HTTP 500 Internal Server Error: slack is having a moment',
        );
        const discord = actionOf(detail, 'discord');
        assert.equal(discord.status, 'success');
        assert.equal(discord.attempt_count, 1);
      },
    );

    // Nothing more, however long we wait.
    h.t.clock.advance(48 * 60 * MIN);
    await runDue(h);
    await h.relogin();
    assert.equal(slackRequests().length, 7, 'exactly seven attempts');
    assert.equal(fake.accepted('discord').length, 1, 'the sibling delivered exactly once');
    assert.ok(
      slackRequests().every((r) => r.problem === null),
      'every attempt well formed',
    );

    const failed = await getRun(h, workflow.id, run.id);
    assert.equal(failed.status, 'failed');
    const finishedAt = start + 6 * SECOND;
    assert.equal(failed.finished_at, new Date(finishedAt).toISOString());
    const slack = actionOf(failed, 'slack');
    assert.equal(slack.status, 'failed');
    assert.equal(slack.attempt_count, 7);
    assert.equal(slack.next_retry_at, null);
    assert.equal(slack.finished_at, new Date(finishedAt).toISOString());
    assert.deepEqual(
      slack.attempts.map((a) => [
        a.n,
        Date.parse(a.started_at) - start,
        a.response_status_code,
        a.response_excerpt,
      ]),
      [1, 2, 3, 4, 5, 6, 7].map((n) => [n, (n - 1) * SECOND, 500, SLACK_DOWN.body]),
    );
    for (const a of slack.attempts) {
      assert.equal(
        a.error_message,
        'Slack answered HTTP 500 Internal Server Error: slack is having a moment',
      );
      assert.ok(a.duration_ms >= 0);
    }
    const discord = actionOf(failed, 'discord');
    assert.deepEqual(
      discord.attempts.map((a) => [a.n, a.response_status_code, a.error_message]),
      [[1, 204, null]],
    );
    assert.equal((await listRuns(h, workflow.id, { status: 'failed' })).pagination.total, 1);

    const notes = expectStatus<{
      results: Array<{ type: string; title: string; body: string; data: Record<string, unknown> }>;
    }>(await call(h.t, '/account/notifications', { token: h.token }), 200, 'notifications');
    const mine = notes.results.filter((n) => n.type === 'workflow.action_failed');
    assert.equal(mine.length, 1, 'one notification for the failed action');
    const note = mine[0];
    assert.ok(note);
    assert.equal(note.data.workflow_id, workflow.id);
    assert.deepEqual(note.data.run_ids, [run.id]);
    assert.match(note.title, /Notify dispatch/);
    assert.match(note.body, /After 7 attempts, the slack action failed/);

    // The target recovers; the retry queues the failed action alone, with a fresh count.
    fake.answer(SLACK_PATH, { status: 200, body: 'ok' });
    const retried = expectStatus<RunOut>(
      await call(h.t, `/workflows/${workflow.id}/runs/${run.id}/retry`, { token: h.token, method: 'POST' }),
      202,
      'retry',
    );
    assert.equal(retried.id, run.id);
    assert.equal(retried.status, 'pending');
    assert.equal(retried.finished_at, null);
    assert.deepEqual(
      retried.actions.map((a) => [a.type, a.status, a.attempt_count, a.error_message]),
      [
        ['slack', 'pending', 0, null],
        ['discord', 'success', 1, null],
      ],
    );
    assert.equal(await h.actions.runOnce(), 1, 'the retry is due at once');
    assert.equal(await h.actions.runOnce(), 0);
    assert.equal(slackRequests().length, 8, 'one more attempt');
    assert.equal(fake.accepted('discord').length, 1, 'the sibling is not sent again');

    const done = await getRun(h, workflow.id, run.id);
    assert.equal(done.status, 'success');
    assert.equal(done.finished_at, h.t.clock.now().toISOString());
    const again = actionOf(done, 'slack');
    assert.equal(again.status, 'success');
    assert.equal(again.attempt_count, 1);
    assert.equal(again.error_message, null);
    assert.deepEqual(
      again.attempts.map((a) => [a.n, a.response_status_code]),
      [...[1, 2, 3, 4, 5, 6, 7].map((n) => [n, 500]), [1, 200]],
      'the history keeps the failed attempts, then the retry’s first',
    );

    const refused = expectError(
      await call(h.t, `/workflows/${workflow.id}/runs/${run.id}/retry`, { token: h.token, method: 'POST' }),
      400,
      undefined,
      'retry of a run without a failed action',
    );
    assert.equal(refused.detail, 'The run has no failed actions to retry');
    assert.equal(await h.actions.runOnce(), 0, 'nothing was queued');
    assert.equal(slackRequests().length, 8);
  });

  test('a retry runs the workflow’s current config when the action’s type is unchanged', async () => {
    fake.reset();
    fake.answer(SLACK_PATH, SLACK_DOWN);
    const workflow = await createWorkflow(h, {
      name: 'Fix the URL',
      trigger: { geofence_id: geofenceId, event_types: ['exit'] },
      actions: [
        { type: 'slack', config: { webhook_url: fake.url(SLACK_PATH), message: '{{device.name}} left' } },
        { type: 'discord', config: { webhook_url: fake.url(DISCORD_PATH) } },
      ],
    });
    await step(false);
    await runDue(h);
    const run = await onlyRun(h, workflow.id);
    await failUntilExhausted(h, workflow.id, run.id, () => SECOND);
    await h.relogin();
    assert.equal((await getRun(h, workflow.id, run.id)).status, 'failed');
    assert.equal(slackRequests().length, 7);

    // The URL is corrected; the Discord action keeps its stored URL (its secret left out).
    const patched = await call(h.t, `/workflows/${workflow.id}`, {
      token: h.token,
      method: 'PATCH',
      body: {
        actions: [
          {
            type: 'slack',
            config: { webhook_url: fake.url(FIXED_SLACK_PATH), message: '{{device.name}} left (fixed)' },
          },
          { type: 'discord', config: {} },
        ],
      },
    });
    expectStatus(patched, 200, 'patch the workflow');
    const retried = expectStatus<RunOut>(
      await call(h.t, `/workflows/${workflow.id}/runs/${run.id}/retry`, { token: h.token, method: 'POST' }),
      202,
      'retry',
    );
    assert.equal(actionOf(retried, 'slack').status, 'pending');
    await runDue(h);
    assert.equal(slackRequests().length, 7, 'the old URL is not called again');
    const fixed = slackRequests(FIXED_SLACK_PATH);
    assert.equal(fixed.length, 1, 'the retry went to the corrected URL');
    const [request] = fixed;
    assert.ok(request);
    assert.equal(request.problem, null);
    assert.equal((request.json as { text: string }).text, 'truck left (fixed)', 'the current message too');
    assert.equal(fake.accepted('discord').length, 1, 'the sibling is not sent again');
    const done = await getRun(h, workflow.id, run.id);
    assert.equal(done.status, 'success');
    assert.equal(actionOf(done, 'slack').attempt_count, 1);
  });

  test('a retry runs the action as it ran when its position now holds another type', async () => {
    fake.reset();
    fake.answer(SLACK_PATH, SLACK_DOWN);
    const source = await eventSource(h, 20, 20);
    const workflow = await createWorkflow(h, {
      name: 'Replaced',
      trigger: { geofence_id: source.geofence.id, event_types: ['enter'] },
      actions: [{ type: 'slack', config: { webhook_url: fake.url(SLACK_PATH), message: 'as it ran' } }],
    });
    await source.step(true);
    await runDue(h);
    const run = await onlyRun(h, workflow.id);
    await failUntilExhausted(h, workflow.id, run.id, () => SECOND);
    await h.relogin();
    expectStatus(
      await call(h.t, `/workflows/${workflow.id}`, {
        token: h.token,
        method: 'PATCH',
        body: { actions: [{ type: 'discord', config: { webhook_url: fake.url(DISCORD_PATH) } }] },
      }),
      200,
      'replace the action',
    );
    fake.answer(SLACK_PATH, { status: 200, body: 'ok' });
    expectStatus(
      await call(h.t, `/workflows/${workflow.id}/runs/${run.id}/retry`, { token: h.token, method: 'POST' }),
      202,
      'retry',
    );
    await runDue(h);
    assert.equal(fake.accepted('discord').length, 0, 'the new action is not this run’s');
    assert.deepEqual(
      slackRequests().map((r) => (r.json as { text: string }).text),
      Array(8).fill('as it ran'),
    );
    const done = await getRun(h, workflow.id, run.id);
    assert.equal(done.status, 'success');
    assert.deepEqual(
      done.actions.map((a) => [a.type, a.status, a.attempt_count]),
      [['slack', 'success', 1]],
    );
  });
});

describe('workflow action retries on the default schedule', () => {
  let h: WorkflowHarness;
  let fake: FakeChatServices;

  before(async () => {
    // An empty value is unset: the built-in 15m,30m,1h,4h,4h,4h.
    h = await startWorkflowHarness({ env: { WEBHOOK_RETRY_SCHEDULE: '' } });
    fake = await FakeChatServices.start();
  });
  after(async () => {
    await h.close();
    await fake.close();
  });

  test('seven attempts at 0, 15m, 45m, 1h45m, 5h45m, 9h45m and 13h45m', async () => {
    assert.deepEqual(
      h.t.deps.config.webhookRetryScheduleMs,
      [15, 30, 60, 240, 240, 240].map((m) => m * MIN),
    );
    fake.answer(SLACK_PATH, SLACK_DOWN);
    const source = await eventSource(h);
    const workflow = await createWorkflow(h, {
      trigger: { geofence_id: source.geofence.id, event_types: ['enter'] },
      actions: [{ type: 'slack', config: { webhook_url: fake.url(SLACK_PATH) } }],
    });
    const start = h.t.clock.now().getTime();
    await source.step(true);
    await runDue(h);
    const run = await onlyRun(h, workflow.id);
    await failUntilExhausted(
      h,
      workflow.id,
      run.id,
      (n) => (DEFAULT_OFFSETS[n - 1] ?? 0) - (DEFAULT_OFFSETS[n - 2] ?? 0),
      (detail, n, due) => {
        assert.equal(detail.status, 'pending');
        assert.equal(actionOf(detail, 'slack').next_retry_at, new Date(due).toISOString(), `attempt ${n}`);
      },
    );
    h.t.clock.advance(24 * 60 * MIN);
    assert.equal(await h.actions.runOnce(), 0);
    await h.relogin();
    const failed = await getRun(h, workflow.id, run.id);
    assert.equal(failed.status, 'failed');
    const slack = actionOf(failed, 'slack');
    assert.equal(slack.attempt_count, 7);
    assert.deepEqual(
      slack.attempts.map((a) => Date.parse(a.started_at) - start),
      DEFAULT_OFFSETS,
    );
    assert.equal(fake.received.length, 7);
  });
});

describe('secrets of failing actions', () => {
  const ACCOUNT_SID = `AC${'5a'.repeat(16)}`;
  const AUTH_TOKEN = 'f3c1e0b7a9d2461c8e5b07d4a6f91c2e';
  const SECRETS = [
    SLACK_PATH,
    SLACK_PATH.split('/').at(-1) ?? SLACK_PATH,
    AUTH_TOKEN,
    Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64'),
  ];
  let h: WorkflowHarness;
  let fake: FakeChatServices;
  let twilio: FakeTwilio;
  const bodies: string[] = [];

  /** Every answer of the app is kept, to be searched for secrets. */
  async function api<T>(status: number, path: string, options: CallOptions = {}): Promise<T> {
    const res = await call(h.t, path, { token: h.token, ...options });
    bodies.push(res.body);
    return expectStatus<T>(res, status, path);
  }

  before(async () => {
    h = await startWorkflowHarness();
    fake = await FakeChatServices.start();
    twilio = await FakeTwilio.start(ACCOUNT_SID, AUTH_TOKEN);
  });
  after(async () => {
    await h.close();
    await fake.close();
    await twilio.close();
  });

  test('targets that repeat the secrets back: none in any answer or log line', async () => {
    // Both targets fail, quoting what they were sent: the path, the token.
    fake.answer(SLACK_PATH, { status: 404, body: `no_service for ${SLACK_PATH}` });
    twilio.answer({ raw: { status: 500, body: `<h1>token ${AUTH_TOKEN} refused</h1>` } });
    const source = await eventSource(h);
    const workflow = await api<{ id: string; actions: Array<{ config: Record<string, unknown> }> }>(
      201,
      '/workflows',
      {
        body: {
          name: 'Secretive',
          trigger: { geofence_id: source.geofence.id, event_types: ['enter'] },
          actions: [
            { type: 'slack', config: { webhook_url: fake.url(SLACK_PATH) } },
            {
              type: 'sms',
              config: {
                to: '+14155550123',
                from: '+14155550100',
                account_sid: ACCOUNT_SID,
                auth_token: AUTH_TOKEN,
                api_base_url: twilio.baseUrl,
              },
            },
          ],
        },
      },
    );
    await api(200, `/workflows/${workflow.id}`);
    await source.step(true);
    await runDue(h);
    for (let n = 2; n <= 7; n++) {
      h.t.clock.advance(SECOND);
      await runDue(h);
    }
    assert.equal(fake.received.length, 7);
    assert.equal(twilio.requests.length, 7);
    await h.relogin();
    const runs = await api<{ results: RunOut[] }>(200, `/workflows/${workflow.id}/runs`);
    const run = runs.results[0];
    assert.ok(run);
    assert.equal(run.status, 'failed');
    const detail = await api<RunDetailOut>(200, `/workflows/${workflow.id}/runs/${run.id}`);
    // The failures are described, and the excerpts kept, with the secrets blanked out.
    assert.match(
      actionOf(detail, 'slack').error_message ?? '',
      /^Slack answered HTTP 404 Not Found: no_service for/,
    );
    assert.match(actionOf(detail, 'sms').error_message ?? '', /^Twilio answered HTTP 500/);
    assert.match(actionOf(detail, 'sms').attempts[0]?.response_excerpt ?? '', /refused/);
    await api(200, '/account/notifications');
    await api(202, `/workflows/${workflow.id}/runs/${run.id}/retry`, { method: 'POST' });
    await api(202, `/workflows/${workflow.id}/test`, { method: 'POST' });
    await runDue(h);
    await api(200, `/workflows/${workflow.id}/runs`);

    assert.ok(h.t.logs.length > 0, 'the app logged');
    const logs = h.t.logs.map((line) => JSON.stringify(line));
    for (const secret of SECRETS) {
      for (const body of bodies) assert.ok(!body.includes(secret), `an answer repeats ${secret}: ${body}`);
      for (const line of logs) assert.ok(!line.includes(secret), `a log line repeats ${secret}: ${line}`);
    }
  });
});
