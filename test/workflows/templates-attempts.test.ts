/**
 * A template past its rendering bounds, as an attempt meets it (contract §6 "Rendering is
 * bounded", ADR 014). The reported case: an e-mail body nesting three sections over a 400-item
 * metadata array, accepted on save, rendered for 13 s on the event loop while /healthz and other
 * tenants waited. Here the attempt fails with the bound's message, for good at the first attempt
 * (the same template and event would stop at the same bound), nothing is sent, and the run can be
 * retried once the template is fixed.
 *
 * The event loop is watched, not timed against a threshold: /healthz is asked over and over while
 * the attempt runs, and each answer must be 200. The unit tests (templates-bounds.test.ts) show
 * that the render stops at the bound by counting what it reads; the latency of /healthz is
 * reported as a diagnostic and only bounded far above what a render within the bounds takes
 * (1 s, against 13 s before the bounds).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { circle, createGeofence } from '../geofences/helpers.ts';
import { KEY_ID, REGION, SECRET_KEY, TOPIC } from '../helpers/action-accounts.ts';
import { type FakeAws, type SnsPublication, startFakeSns } from '../helpers/fake-aws.ts';
import { call, expectStatus } from '../helpers/identity.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { eventSource } from '../webhooks/delivery-helpers.ts';
import {
  createWorkflow,
  getRun,
  listRuns,
  runDue,
  startWorkflowHarness,
  type WorkflowHarness,
} from './workflow-helpers.ts';

const ITERATIONS_MESSAGE = 'Template exceeds 10000 section iterations';
const ITEMS = Array.from({ length: 400 }, (_, i) => ({ name: `stop ${i}`, n: i }));

const nest = (depth: number, name: string, inner: string) =>
  `{{#${name}}}`.repeat(depth) + inner + `{{/${name}}}`.repeat(depth);

/**
 * Runs `work` while asking /healthz one request after another (at least 10 times); returns every
 * latency. A render holding the event loop shows as an answer that took as long as the render.
 */
async function probingHealth(h: WorkflowHarness, work: () => Promise<void>): Promise<number[]> {
  // The first request of an app compiles its route; it is not the one measured.
  assert.equal((await h.t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  const latencies: number[] = [];
  let working = true;
  const probe = (async () => {
    while (working || latencies.length < 10) {
      const started = performance.now();
      const res = await h.t.app.inject({ method: 'GET', url: '/healthz' });
      latencies.push(performance.now() - started);
      assert.equal(res.statusCode, 200, res.body);
      await yieldLoop();
    }
  })();
  try {
    await work();
  } finally {
    working = false;
    await probe;
  }
  return latencies;
}

describe('a template past its bounds in an attempt', () => {
  let h: WorkflowHarness;
  let sink: SmtpSink;
  let sns: FakeAws<SnsPublication>;

  before(async () => {
    sink = await startSmtpSink();
    h = await startWorkflowHarness({ env: { SMTP_URL: sink.url } });
    sns = await startFakeSns({ region: REGION, credentials: { [KEY_ID]: SECRET_KEY }, topics: [TOPIC] });
  });
  after(async () => {
    await h.close();
    await Promise.all([sink.close(), sns.close()]);
  });

  test('e-mail, three sections over 400 items: the attempt fails for good with the bound, nothing is sent', async (t) => {
    const geofence = await createGeofence(
      h.t,
      { token: h.token },
      { name: 'Depot', geometry: circle(13.4, 52.5, 200), metadata: { items: ITEMS } },
    );
    const body = nest(3, 'geofence.metadata.items', '{{n}}');
    const workflow = await createWorkflow(h, {
      trigger: { geofence_id: geofence.id, event_types: ['enter'] },
      actions: [{ type: 'email', config: { to: ['ops@example.com'], subject: 'Stops', body } }],
    });
    const { run_id: runId } = expectStatus<{ run_id: string }>(
      await call(h.t, `/workflows/${workflow.id}/test`, { token: h.token, method: 'POST' }),
      202,
      'test run',
    );

    const latencies = await probingHealth(h, () => runDue(h));
    t.diagnostic(
      `/healthz during the attempt: ${latencies.length} answers, slowest ${Math.max(...latencies).toFixed(1)} ms`,
    );
    assert.ok(latencies.length > 0);
    assert.ok(Math.max(...latencies) < 1_000, `slowest /healthz: ${Math.max(...latencies)} ms`);

    const run = await getRun(h, workflow.id, runId);
    assert.equal(run.status, 'failed');
    const [action] = run.actions;
    assert.equal(action?.status, 'failed');
    assert.equal(action?.attempt_count, 1, 'no retry: the same event would stop at the same bound');
    assert.equal(action?.error_message, ITERATIONS_MESSAGE);
    assert.equal(action?.next_retry_at, null);
    assert.deepEqual(
      action?.attempts.map((a) => [a.n, a.error_message, a.response_excerpt]),
      [[1, ITERATIONS_MESSAGE, null]],
    );
    assert.equal(sink.messagesTo('ops@example.com').length, 0, 'nothing was sent');

    // Fixed, the action is retried with the workflow's current template and sent.
    expectStatus(
      await call(h.t, `/workflows/${workflow.id}`, {
        token: h.token,
        method: 'PATCH',
        body: {
          actions: [
            {
              type: 'email',
              config: {
                to: ['ops@example.com'],
                subject: 'Stops',
                body: nest(1, 'geofence.metadata.items', '{{n}} '),
              },
            },
          ],
        },
      }),
      200,
      'fix the template',
    );
    expectStatus(
      await call(h.t, `/workflows/${workflow.id}/runs/${runId}/retry`, { token: h.token, method: 'POST' }),
      202,
      'retry',
    );
    await runDue(h);
    assert.equal((await getRun(h, workflow.id, runId)).status, 'success');
    const [sent] = sink.messagesTo('ops@example.com');
    assert.equal(sent?.text.trim(), ITEMS.map((item) => item.n).join(' '));
  });

  test('sns, four sections over 400 items of an event’s own metadata: the same failure, nothing published', async () => {
    const source = await eventSource(h, 14.4, 51.5);
    const workflow = await createWorkflow(h, {
      trigger: { geofence_id: source.geofence.id, event_types: ['enter'] },
      actions: [
        {
          type: 'sns',
          config: {
            topic_arn: TOPIC,
            region: REGION,
            access_key_id: KEY_ID,
            secret_access_key: SECRET_KEY,
            endpoint: sns.url,
            message: nest(4, 'metadata.items', '{{name}}'),
          },
        },
      ],
    });
    // The location's metadata becomes the event's (`{{metadata.…}}`).
    expectStatus(
      await call(h.t, `/devices/${source.device.id}/locations`, {
        token: h.token,
        body: {
          coordinates: [14.4, 51.5],
          timestamp: new Date(h.t.clock.now().getTime() - 60_000).toISOString(),
          metadata: { items: ITEMS },
        },
      }),
      201,
      'post location',
    );
    await runDue(h);

    const runs = await listRuns(h, workflow.id);
    assert.equal(runs.results.length, 1);
    const [action] = runs.results[0]?.actions ?? [];
    assert.deepEqual(
      [action?.status, action?.attempt_count, action?.error_message],
      ['failed', 1, 'Template output exceeds 65536 bytes (64 KiB)'],
    );
    assert.equal(sns.requestCount(), 0, 'nothing was published');
  });
});
