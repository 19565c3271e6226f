/**
 * Workflow actions end to end (contract §6): a real enter or exit posted through the location API
 * starts the runs in the outbox dispatcher, and the workflow worker (and, for `webhook` actions,
 * the delivery worker) makes each of the nine action types reach a loopback stand-in speaking its
 * real protocol: the chat services' incoming webhooks, the SMTP sink, Twilio, Lambda and SNS
 * (their fakes recompute SigV4), the local PostgreSQL, and a webhook receiver whose signature is
 * checked with the webhook's secret. Outcomes are read back through GET /workflows/{id}/runs.
 * Then the trigger: the event type, the geofence, and one event matching two workflows.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { verifySignature } from '../../src/webhooks/signature.ts';
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  CustomerDatabase,
  FUNCTION,
  KEY_ID,
  REGION,
  SECRET_KEY,
  TOPIC,
} from '../helpers/action-accounts.ts';
import {
  type FakeAws,
  type LambdaInvocation,
  type SnsPublication,
  startFakeLambda,
  startFakeSns,
} from '../helpers/fake-aws.ts';
import { DISCORD_PATH, FakeChatServices, SLACK_PATH, TEAMS_PATH } from '../helpers/fake-chat-services.ts';
import { FakeTwilio } from '../helpers/fake-twilio.ts';
import { call, expectStatus } from '../helpers/identity.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import {
  createWebhook,
  type DeadLetterOut,
  eventSource,
  getDelivery,
  listDeliveries,
  Receiver,
} from '../webhooks/delivery-helpers.ts';
import {
  createWorkflow,
  getRun,
  listRuns,
  type RunDetailOut,
  runDue,
  startWorkflowHarness,
  type WorkflowHarness,
  workflowFixture,
} from './workflow-helpers.ts';

/** The template of chat messages, subjects and SMS bodies, and what it renders to for `eventSource`. */
const MESSAGE = '{{device.name}} entered {{geofence.name}}';
const RENDERED = 'truck entered Depot';
const LNG = 13.4;

type Source = Awaited<ReturnType<typeof eventSource>>;

/** A geofence and device of their own for each test, one degree of latitude from the others. */
function places(): (h: WorkflowHarness) => Promise<Source> {
  let lat = 10;
  return (h) => {
    lat += 1;
    return eventSource(h, LNG, lat);
  };
}

const onEnter = (source: Source) => ({ geofence_id: source.geofence.id, event_types: ['enter'] });

/** The event record of GET /events: what the seed §6.3 payload of the event is built from. */
interface EventOut {
  event_id: string;
  event: string;
  event_type: string;
  device_id: string;
  user_id: string;
  geofence_id: string;
  geofence_name: string;
  point: unknown;
  occurred_at: string;
  metadata: { geofence_metadata: unknown; event_metadata: unknown };
}

async function theEvent(h: WorkflowHarness, source: Source, eventType: 'enter' | 'exit'): Promise<EventOut> {
  const events = expectStatus<{ results: EventOut[] }>(
    await call(h.t, '/events', {
      token: h.token,
      query: { geofence_id: source.geofence.id, event_type: eventType },
    }),
    200,
    'list events',
  );
  assert.equal(events.results.length, 1, `one ${eventType} event of the geofence`);
  return events.results[0] as EventOut;
}

/**
 * Asserts that `payload` is the seed §6.3 payload of the source's one `eventType` event with the
 * given `id`: field by field as the event record answers it, and against what the test posted.
 */
async function assertSeedPayload(
  h: WorkflowHarness,
  payload: unknown,
  source: Source,
  eventType: 'enter' | 'exit',
  id: string,
): Promise<void> {
  const e = await theEvent(h, source, eventType);
  assert.deepEqual(payload, {
    id,
    event: e.event,
    timestamp: e.occurred_at,
    data: {
      event_id: e.event_id,
      user_id: e.user_id,
      device_id: e.device_id,
      geofence_id: e.geofence_id,
      geofence_name: e.geofence_name,
      event_type: e.event_type,
      point: e.point,
      metadata: {
        geofence_metadata: e.metadata.geofence_metadata,
        event_metadata: e.metadata.event_metadata,
      },
    },
  });
  const data = (payload as { event: string; data: Record<string, unknown> }).data;
  assert.equal((payload as { event: string }).event, `geofence.${eventType}`);
  assert.match(String(data.event_id), new RegExp(`^${source.geofence.id}_${eventType}_\\d+$`));
  assert.equal(data.device_id, source.device.id);
  assert.equal(data.geofence_id, source.geofence.id);
  assert.equal(data.user_id, 'driver-7');
  assert.deepEqual(data.metadata, { geofence_metadata: { site: 'north' }, event_metadata: { step: 1 } });
}

/** The workflow's one run, with its attempts. */
async function onlyRun(h: WorkflowHarness, workflowId: string): Promise<RunDetailOut> {
  const runs = await listRuns(h, workflowId);
  assert.equal(runs.pagination.total, 1, 'the workflow ran once');
  return getRun(h, workflowId, runs.results[0]?.id ?? '');
}

/** A run of one action that succeeded at the first attempt, as GET /workflows/{id}/runs/{run_id} says. */
function assertSucceeded(
  run: RunDetailOut,
  type: string,
  statusCode: number | null,
  excerpt: string | RegExp | null,
): void {
  assert.equal(run.status, 'success');
  assert.notEqual(run.finished_at, null);
  assert.equal(run.event_type, 'geofence.enter');
  assert.equal(run.test, false);
  assert.equal(run.actions.length, 1);
  const [action] = run.actions;
  assert.ok(action);
  assert.equal(action.type, type);
  assert.equal(action.error_message, null, `the ${type} action failed: ${action.error_message}`);
  assert.equal(action.status, 'success');
  assert.equal(action.attempt_count, 1);
  assert.equal(action.response_status_code, statusCode);
  assert.notEqual(action.finished_at, null);
  assert.equal(action.attempts.length, 1);
  const [attempt] = action.attempts;
  assert.equal(attempt?.n, 1);
  assert.equal(attempt?.response_status_code, statusCode);
  assert.equal(attempt?.error_message, null);
  if (excerpt instanceof RegExp) assert.match(attempt?.response_excerpt ?? '', excerpt);
  else assert.equal(attempt?.response_excerpt, excerpt);
}

// ---------------------------------------------------------------------------------------------
// Every action type but `webhook`, on one app started with SMTP_URL pointing at the sink.

describe('workflow actions reach their targets', () => {
  let sink: SmtpSink;
  let h: WorkflowHarness;
  let chat: FakeChatServices;
  let twilio: FakeTwilio;
  let lambda: FakeAws<LambdaInvocation>;
  let sns: FakeAws<SnsPublication>;
  let customer: CustomerDatabase;
  const place = places();

  before(async () => {
    sink = await startSmtpSink();
    h = await startWorkflowHarness({ env: { SMTP_URL: sink.url } });
    chat = await FakeChatServices.start();
    twilio = await FakeTwilio.start(ACCOUNT_SID, AUTH_TOKEN);
    const credentials = { [KEY_ID]: SECRET_KEY };
    lambda = await startFakeLambda({ region: REGION, credentials, functions: [FUNCTION] });
    sns = await startFakeSns({ region: REGION, credentials, topics: [TOPIC] });
    customer = await CustomerDatabase.create('wf_e2e');
  });
  after(async () => {
    // The app first: its pools hold sessions of the customer role.
    await h.close();
    await customer.drop();
    await Promise.all([chat.close(), twilio.close(), lambda.close(), sns.close(), sink.close()]);
  });
  beforeEach(() => chat.reset());

  describe('chat services', () => {
    test('slack: text and a mrkdwn section with the rendered message; 200 ok', async () => {
      const source = await place(h);
      const workflow = await createWorkflow(h, {
        trigger: onEnter(source),
        actions: [{ type: 'slack', config: { webhook_url: chat.url(SLACK_PATH), message: MESSAGE } }],
      });
      await source.step(true);
      await runDue(h);

      assert.equal(chat.received.length, 1);
      const [request] = chat.accepted('slack');
      assert.ok(request, `Slack refused the request: ${chat.received[0]?.problem}`);
      assert.equal(request.path, SLACK_PATH);
      assert.deepEqual(request.json, {
        text: RENDERED,
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: RENDERED } }],
      });
      const run = await onlyRun(h, workflow.id);
      assert.equal(run.event_id, (await theEvent(h, source, 'enter')).event_id);
      assertSucceeded(run, 'slack', 200, 'ok');
    });

    test('discord: the rendered content with mentions off; 204 and no excerpt', async () => {
      const source = await place(h);
      const workflow = await createWorkflow(h, {
        trigger: onEnter(source),
        actions: [{ type: 'discord', config: { webhook_url: chat.url(DISCORD_PATH), message: MESSAGE } }],
      });
      await source.step(true);
      await runDue(h);

      assert.equal(chat.received.length, 1);
      const [request] = chat.accepted('discord');
      assert.ok(request, `Discord refused the request: ${chat.received[0]?.problem}`);
      assert.equal(request.path, DISCORD_PATH);
      assert.deepEqual(request.json, { content: RENDERED, allowed_mentions: { parse: [] } });
      // Discord answers 204 No Content: there is nothing to excerpt.
      assertSucceeded(await onlyRun(h, workflow.id), 'discord', 204, null);
    });

    test('teams: a MessageCard with the rendered text and the event as facts; 200 "1"', async () => {
      const source = await place(h);
      const workflow = await createWorkflow(h, {
        trigger: onEnter(source),
        actions: [{ type: 'teams', config: { webhook_url: chat.url(TEAMS_PATH), message: MESSAGE } }],
      });
      await source.step(true);
      await runDue(h);

      assert.equal(chat.received.length, 1);
      const [request] = chat.accepted('teams');
      assert.ok(request, `Teams refused the request: ${chat.received[0]?.problem}`);
      assert.equal(request.path, TEAMS_PATH);
      const card = request.json as Record<string, unknown>;
      assert.equal(card['@type'], 'MessageCard');
      assert.equal(card.text, RENDERED);
      const event = await theEvent(h, source, 'enter');
      const [lng, lat] = (event.point as { coordinates: [number, number] }).coordinates;
      assert.deepEqual(card.sections, [
        {
          facts: [
            { name: 'Device', value: 'truck' },
            { name: 'Geofence', value: 'Depot' },
            { name: 'Event', value: 'geofence.enter' },
            { name: 'Point', value: `${lat}, ${lng}` },
            { name: 'Time', value: event.occurred_at },
          ],
        },
      ]);
      assertSucceeded(await onlyRun(h, workflow.id), 'teams', 200, '1');
    });
  });

  test('email: one message to the recipients with the rendered subject and body', async () => {
    const source = await place(h);
    const to = ['ops@example.com', 'dispatch@example.com'];
    const workflow = await createWorkflow(h, {
      trigger: onEnter(source),
      actions: [
        {
          type: 'email',
          config: {
            to,
            subject: MESSAGE,
            body: '{{device.name}} ({{device.user_id}}) {{event_type}} {{geofence.name}} at {{point.lat}},{{point.lng}}\nevent {{event_id}}',
          },
        },
      ],
    });
    await source.step(true);
    await runDue(h);

    const event = await theEvent(h, source, 'enter');
    const sent = sink.messages.filter((m) => m.subject === RENDERED);
    assert.equal(sent.length, 1, 'one message for all recipients');
    const [message] = sent;
    assert.deepEqual(message?.to, to);
    const [lng, lat] = (event.point as { coordinates: [number, number] }).coordinates;
    assert.equal(
      message?.text.replace(/\r?\n$/, ''),
      `truck (driver-7) enter Depot at ${lat},${lng}\nevent ${event.event_id}`,
    );
    // SMTP has no HTTP status; the excerpt is the server's reply.
    assertSucceeded(await onlyRun(h, workflow.id), 'email', null, /^250 /);
  });

  test('sms: Twilio gets To, From and the rendered Body form-encoded, with basic auth', async () => {
    twilio.reset();
    const source = await place(h);
    const workflow = await createWorkflow(h, {
      trigger: onEnter(source),
      actions: [
        {
          type: 'sms',
          config: {
            to: '+14155550123',
            from: '+14155550100',
            account_sid: ACCOUNT_SID,
            auth_token: AUTH_TOKEN,
            api_base_url: twilio.baseUrl,
            body: MESSAGE,
          },
        },
      ],
    });
    await source.step(true);
    await runDue(h);

    assert.equal(twilio.requests.length, 1);
    const [request] = twilio.created();
    assert.ok(request, `Twilio refused the request: ${twilio.requests[0]?.raw}`);
    assert.equal(request.method, 'POST');
    assert.equal(request.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`);
    assert.equal(
      request.headers.authorization,
      `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`,
    );
    assert.deepEqual(Object.fromEntries(request.form ?? []), {
      To: '+14155550123',
      From: '+14155550100',
      Body: RENDERED,
    });
    const run = await onlyRun(h, workflow.id);
    assertSucceeded(run, 'sms', 201, /"sid":"SM[0-9a-f]{32}"/);
    assert.ok(!JSON.stringify(run).includes(AUTH_TOKEN), 'the run shows the auth token');
  });

  test('lambda: an asynchronous invocation, signed with the action key, of the seed payload', async () => {
    const source = await place(h);
    const workflow = await createWorkflow(h, {
      trigger: onEnter(source),
      actions: [
        {
          type: 'lambda',
          config: {
            function_name: FUNCTION,
            region: REGION,
            access_key_id: KEY_ID,
            secret_access_key: SECRET_KEY,
            endpoint: lambda.url,
          },
        },
      ],
    });
    await source.step(true);
    await runDue(h);

    // The fake recorded the invocation only because the signature matched the action's key.
    assert.equal(lambda.requestCount(), 1);
    assert.equal(lambda.accepted.length, 1);
    const [invocation] = lambda.accepted;
    assert.equal(invocation?.functionName, FUNCTION);
    assert.equal(invocation?.invocationType, 'Event');
    assert.equal(invocation?.accessKeyId, KEY_ID);
    assert.equal(invocation?.region, REGION);
    const run = await onlyRun(h, workflow.id);
    await assertSeedPayload(h, JSON.parse(invocation?.payload ?? 'null'), source, 'enter', run.id);
    assertSucceeded(run, 'lambda', 202, '{"StatusCode":202}');
  });

  test('sns: a publication, signed with the action key, of the seed payload', async () => {
    const source = await place(h);
    const workflow = await createWorkflow(h, {
      trigger: onEnter(source),
      actions: [
        {
          type: 'sns',
          config: {
            topic_arn: TOPIC,
            region: REGION,
            access_key_id: KEY_ID,
            secret_access_key: SECRET_KEY,
            endpoint: sns.url,
          },
        },
      ],
    });
    await source.step(true);
    await runDue(h);

    assert.equal(sns.requestCount(), 1);
    assert.equal(sns.accepted.length, 1);
    const [publication] = sns.accepted;
    assert.equal(publication?.topicArn, TOPIC);
    assert.equal(publication?.accessKeyId, KEY_ID);
    const run = await onlyRun(h, workflow.id);
    await assertSeedPayload(h, JSON.parse(publication?.message ?? 'null'), source, 'enter', run.id);
    assertSucceeded(run, 'sns', 200, JSON.stringify({ MessageId: publication?.messageId }));
  });

  test('database: the event as a row of a table created for it in the local PostgreSQL', async () => {
    const source = await place(h);
    const workflow = await createWorkflow(h, {
      trigger: onEnter(source),
      actions: [{ type: 'database', config: { connection_url: customer.url(), table: 'geofence_events' } }],
    });
    const exists = async () =>
      (
        await customer.admin.query<{ found: string | null }>('select to_regclass($1) as found', [
          `${customer.name}.geofence_events`,
        ])
      ).rows[0]?.found !== null;
    assert.equal(await exists(), false, 'no table before the event');
    await source.step(true);
    await runDue(h);

    assert.equal(await exists(), true, 'the table was created');
    const rows = await customer.admin.query<{
      id: string;
      event_id: string;
      event_type: string;
      payload: unknown;
    }>(`select id, event_id, event_type, payload from ${customer.name}.geofence_events`);
    assert.equal(rows.rows.length, 1);
    const [row] = rows.rows;
    const run = await onlyRun(h, workflow.id);
    assert.equal(row?.event_id, run.event_id);
    assert.equal(row?.event_id, (await theEvent(h, source, 'enter')).event_id);
    assert.equal(row?.event_type, 'geofence.enter');
    // jsonb comes back parsed: the stored document itself, not a string holding it.
    await assertSeedPayload(h, row?.payload, source, 'enter', run.id);
    assertSucceeded(run, 'database', null, '{"table":"geofence_events","id":"1"}');
  });
});

// ---------------------------------------------------------------------------------------------

interface SecretOut {
  secret: string;
}

describe('webhook actions are deliveries of the webhook engine', () => {
  const fixture = workflowFixture();
  const place = places();
  let receiver: Receiver;

  before(async () => {
    receiver = await Receiver.start(() => fixture.h.t.clock.now().getTime());
  });
  after(() => receiver.close());
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.respond = () => ({});
  });

  const secretOf = async (webhookId: string) =>
    expectStatus<SecretOut>(
      await call(fixture.h.t, `/webhooks/${webhookId}/secret`, { token: fixture.h.token }),
      200,
      'webhook secret',
    ).secret;

  const deleteWebhook = (webhookId: string) =>
    call(fixture.h.t, `/webhooks/${webhookId}`, { token: fixture.h.token, method: 'DELETE' });

  test("a signed delivery to the webhook, though the webhook's own filter excludes the event", async () => {
    const { h } = fixture;
    const hook = await createWebhook(h, { url: receiver.url, name: 'exits only', events: ['geofence.exit'] });
    try {
      const source = await place(h);
      const workflow = await createWorkflow(h, {
        trigger: onEnter(source),
        actions: [{ type: 'webhook', config: { webhook_id: hook.id } }],
      });
      await source.step(true);
      await runDue(h);

      assert.equal(receiver.requests.length, 1, 'the workflow delivered the enter');
      const [request] = receiver.requests;
      assert.ok(request);
      const secret = await secretOf(hook.id);
      assert.equal(request.method, 'POST');
      assert.ok(
        verifySignature(request.body, request.headers['x-svc-signature'] as string, secret),
        'signed with the webhook secret',
      );
      const payload = JSON.parse(request.body.toString('utf8')) as { id: string; data: { event_id: string } };
      const key = request.headers['x-idempotency-key'] as string;
      await assertSeedPayload(h, payload, source, 'enter', key);
      assert.equal(request.headers['x-svc-event-id'], payload.data.event_id);
      assert.equal(request.headers['x-svc-attempt'], '1');

      const run = await onlyRun(h, workflow.id);
      assert.equal(run.status, 'success');
      const [action] = run.actions;
      assert.equal(action?.type, 'webhook');
      assert.equal(action?.status, 'success');
      assert.equal(action?.attempt_count, 1);
      assert.equal(action?.response_status_code, 200);
      assert.deepEqual(
        action?.attempts.map((a) => [a.n, a.response_status_code, a.response_excerpt]),
        [[1, 200, 'ok']],
      );

      const deliveries = await listDeliveries(h, hook.id);
      assert.equal(deliveries.pagination.total, 1);
      const [delivery] = deliveries.results;
      assert.equal(delivery?.id, action?.delivery_id);
      assert.equal(delivery?.status, 'success');
      assert.equal(delivery?.event_type, 'geofence.enter');
      assert.equal(delivery?.event_id, payload.data.event_id);
      assert.equal(delivery?.idempotency_key, key);

      // The webhook's filter still rules its own subscription: the exit is delivered, and runs nothing.
      await source.step(false);
      await runDue(h);
      assert.equal(receiver.requests.length, 2);
      assert.equal(JSON.parse(receiver.requests[1]?.body.toString('utf8') ?? '{}').event, 'geofence.exit');
      assert.equal((await listRuns(h, workflow.id)).pagination.total, 1);
    } finally {
      await deleteWebhook(hook.id);
    }
  });

  test('a webhook both subscribed and named by an action gets two deliveries of the event', async () => {
    const { h } = fixture;
    const hook = await createWebhook(h, { url: receiver.url, name: 'subscribed' });
    try {
      const source = await place(h);
      const workflow = await createWorkflow(h, {
        trigger: onEnter(source),
        actions: [{ type: 'webhook', config: { webhook_id: hook.id } }],
      });
      await source.step(true);
      await runDue(h);

      assert.equal(receiver.requests.length, 2);
      const secret = await secretOf(hook.id);
      const keys: string[] = [];
      for (const request of receiver.requests) {
        assert.ok(verifySignature(request.body, request.headers['x-svc-signature'] as string, secret));
        const key = request.headers['x-idempotency-key'] as string;
        await assertSeedPayload(h, JSON.parse(request.body.toString('utf8')), source, 'enter', key);
        keys.push(key);
      }
      assert.notEqual(keys[0], keys[1], 'two deliveries, not one sent twice');

      const deliveries = await listDeliveries(h, hook.id);
      assert.equal(deliveries.pagination.total, 2);
      assert.deepEqual(
        deliveries.results.map((d) => d.status),
        ['success', 'success'],
      );
      assert.deepEqual(new Set(deliveries.results.map((d) => d.idempotency_key)), new Set(keys));
      const run = await onlyRun(h, workflow.id);
      assert.equal(run.status, 'success');
      const ids = deliveries.results.map((d) => d.id);
      assert.ok(ids.includes(run.actions[0]?.delivery_id ?? ''), 'one of them is the action’s');
    } finally {
      await deleteWebhook(hook.id);
    }
  });

  test('a delivery answered 500 to the end is dead-lettered, and the action and run fail', async () => {
    const { h } = fixture;
    receiver.respond = () => ({ status: 500, body: 'receiver down' });
    // Subscribed to exits only: the enter's one delivery is the action's.
    const hook = await createWebhook(h, { url: receiver.url, name: 'down', events: ['geofence.exit'] });
    try {
      const source = await place(h);
      const workflow = await createWorkflow(h, {
        trigger: onEnter(source),
        actions: [{ type: 'webhook', config: { webhook_id: hook.id } }],
      });
      await source.step(true);
      await runDue(h);

      const pending = await onlyRun(h, workflow.id);
      assert.equal(pending.status, 'pending', 'the run waits for the retries');
      assert.equal(pending.actions[0]?.status, 'pending');
      assert.equal(pending.actions[0]?.attempt_count, 1);
      assert.notEqual(pending.actions[0]?.next_retry_at, null);
      const deliveryId = pending.actions[0]?.delivery_id ?? '';

      // WEBHOOK_RETRY_SCHEDULE is 1s×6: six more attempts, one a second.
      for (let n = 2; n <= 7; n += 1) {
        h.t.clock.advance(1000);
        await runDue(h);
        assert.equal(receiver.requests.length, n, `attempt ${n} was made`);
      }
      h.t.clock.advance(60_000);
      await runDue(h);
      assert.equal(receiver.requests.length, 7, 'nothing after the last attempt');
      assert.deepEqual(
        receiver.requests.map((r) => r.headers['x-svc-attempt']),
        ['1', '2', '3', '4', '5', '6', '7'],
      );

      const delivery = await getDelivery(h, deliveryId);
      assert.equal(delivery.status, 'failed');
      assert.equal(delivery.attempt_count, 7);
      const dlq = expectStatus<{ results: DeadLetterOut[] }>(
        await call(h.t, '/webhooks/dlq', { token: h.token }),
        200,
        'dead letters',
      );
      const entries = dlq.results.filter((e) => e.delivery_id === deliveryId);
      assert.equal(entries.length, 1, 'the delivery is dead-lettered');
      assert.equal(entries[0]?.webhook.id, hook.id);
      assert.equal(entries[0]?.event_type, 'geofence.enter');

      const run = await onlyRun(h, workflow.id);
      assert.equal(run.status, 'failed');
      assert.notEqual(run.finished_at, null);
      const [action] = run.actions;
      assert.equal(action?.status, 'failed');
      assert.equal(action?.attempt_count, 7);
      assert.equal(action?.response_status_code, 500);
      assert.match(action?.error_message ?? '', /HTTP 500/);
      assert.equal(action?.next_retry_at, null);
      assert.deepEqual(
        action?.attempts.map((a) => [a.n, a.response_status_code, a.response_excerpt]),
        [1, 2, 3, 4, 5, 6, 7].map((n) => [n, 500, 'receiver down']),
      );
    } finally {
      await deleteWebhook(hook.id);
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('which events run a workflow', () => {
  const fixture = workflowFixture();
  const place = places();
  let chat: FakeChatServices;

  before(async () => {
    chat = await FakeChatServices.start();
  });
  after(() => chat.close());
  beforeEach(() => chat.reset());

  const slack = (message: string) => ({
    type: 'slack',
    config: { webhook_url: chat.url(SLACK_PATH), message },
  });
  const texts = () => chat.accepted('slack').map((r) => (r.json as { text: string }).text);

  test("a workflow triggered by ['exit'] runs on exits only", async () => {
    const { h } = fixture;
    const source = await place(h);
    const workflow = await createWorkflow(h, {
      trigger: { geofence_id: source.geofence.id, event_types: ['exit'] },
      actions: [slack('{{device.name}} {{event_type}} {{geofence.name}}')],
    });
    await source.step(true);
    await runDue(h);
    assert.equal((await listRuns(h, workflow.id)).pagination.total, 0, 'the enter ran nothing');
    assert.deepEqual(texts(), []);

    await source.step(false);
    await runDue(h);
    const run = await onlyRun(h, workflow.id);
    assert.equal(run.event_type, 'geofence.exit');
    assert.equal(run.event_id, (await theEvent(h, source, 'exit')).event_id);
    assert.equal(run.status, 'success');
    assert.deepEqual(texts(), ['truck exit Depot']);

    await source.step(true);
    await runDue(h);
    assert.equal((await listRuns(h, workflow.id)).pagination.total, 1, 'the second enter ran nothing');
  });

  test('events of another geofence do not run it', async () => {
    const { h } = fixture;
    const watched = await place(h);
    const other = await place(h);
    const workflow = await createWorkflow(h, {
      trigger: { geofence_id: watched.geofence.id, event_types: ['enter', 'exit'] },
      actions: [slack('{{event_type}} {{geofence.id}}')],
    });
    await other.step(true);
    await other.step(false);
    await runDue(h);
    assert.equal((await listRuns(h, workflow.id)).pagination.total, 0);
    assert.deepEqual(texts(), []);

    await watched.step(true);
    await runDue(h);
    assert.equal((await listRuns(h, workflow.id)).pagination.total, 1);
    assert.deepEqual(texts(), [`enter ${watched.geofence.id}`]);
  });

  test('one event matching two workflows runs each of them once', async () => {
    const { h } = fixture;
    const source = await place(h);
    const first = await createWorkflow(h, {
      name: 'first',
      trigger: onEnter(source),
      actions: [slack('{{workflow.name}}: {{device.name}} entered {{geofence.name}}')],
    });
    const second = await createWorkflow(h, {
      name: 'second',
      trigger: { geofence_id: source.geofence.id, event_types: ['enter', 'exit'] },
      actions: [slack('{{workflow.name}}: {{device.name}} entered {{geofence.name}}')],
    });
    await source.step(true);
    await runDue(h);

    const runs = [await onlyRun(h, first.id), await onlyRun(h, second.id)];
    assert.notEqual(runs[0]?.id, runs[1]?.id);
    const eventId = (await theEvent(h, source, 'enter')).event_id;
    assert.deepEqual(
      runs.map((r) => [r.workflow_id, r.event_id, r.status]),
      [
        [first.id, eventId, 'success'],
        [second.id, eventId, 'success'],
      ],
    );
    assert.deepEqual(texts().sort(), ['first: truck entered Depot', 'second: truck entered Depot']);
  });
});
