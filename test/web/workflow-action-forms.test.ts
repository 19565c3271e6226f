/**
 * The forms of the action types other than Slack and e-mail (workflows.test.ts has those), in a
 * real browser against the real server, whose action worker sends to local stand-ins that speak
 * each service's wire format and check its credentials: Microsoft Teams and Discord incoming
 * webhooks, Twilio's Messages API (basic auth), AWS Lambda and SNS (Signature V4 recomputed with
 * the key typed), a table of a customer role in the local PostgreSQL, and a webhook receiver that
 * verifies the signature. Every field is typed into the builder; the saved workflow answers each
 * config as typed, secrets masked; "Test" runs every action to `success`, and each target received
 * what was typed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
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
import { DISCORD_PATH, FakeChatServices, TEAMS_PATH } from '../helpers/fake-chat-services.ts';
import { FakeTwilio } from '../helpers/fake-twilio.ts';
import { httpExpect } from '../helpers/spawned-server.ts';
import { Receiver } from '../webhooks/delivery-helpers.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type DashboardServer, registerAccount } from './dashboard-server.ts';

const DB_PASSWORD = 'customer-db-password';
const DEPOT_RING = [
  [13.404, 52.518],
  [13.408, 52.518],
  [13.408, 52.521],
  [13.404, 52.521],
  [13.404, 52.518],
];

/** Adds an action of the type labelled `label` and answers its fieldset. */
async function addAction(page: Page, position: number, label: string): Promise<Locator> {
  await page.getByLabel('New action type').selectOption({ label });
  await page.getByRole('button', { name: 'Add action' }).click();
  const group = page.getByRole('group', { name: `Action ${position}: ${label}` });
  await group.waitFor();
  return group;
}

/** Types into the fields of an action by label; secret fields are checked to be password inputs. */
async function fill(group: Locator, fields: Record<string, string>, secrets: readonly string[] = []) {
  for (const [label, value] of Object.entries(fields)) {
    const input = group.getByLabel(label, { exact: true });
    if (secrets.includes(label)) assert.equal(await input.getAttribute('type'), 'password', label);
    await input.fill(value);
  }
}

describe('dashboard: the forms of every other action type', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let chat: FakeChatServices;
  let twilio: FakeTwilio;
  let lambda: FakeAws<LambdaInvocation>;
  let sns: FakeAws<SnsPublication>;
  let receiver: Receiver;
  let customer: CustomerDatabase;
  /** The signing secret of the webhook the receiver stands for, and whether each delivery had it. */
  let secret = '';
  const verified: boolean[] = [];

  before(async () => {
    const credentials = { [KEY_ID]: SECRET_KEY };
    [chat, twilio, lambda, sns, receiver] = await Promise.all([
      FakeChatServices.start(),
      FakeTwilio.start(ACCOUNT_SID, AUTH_TOKEN),
      startFakeLambda({ region: REGION, credentials, functions: [FUNCTION] }),
      startFakeSns({ region: REGION, credentials, topics: [TOPIC] }),
      // Deliveries whose `X-SVC-Signature` checks out with the webhook's secret are accepted.
      Receiver.start(Date.now, (request) => {
        const header = request.headers['x-svc-signature'];
        verified.push(verifySignature(request.body, typeof header === 'string' ? header : null, secret));
        return { status: verified.at(-1) ? 204 : 401 };
      }),
    ]);
    customer = await CustomerDatabase.create('wf_forms', DB_PASSWORD);
    ({ server, browser } = await startServerAndBrowser({
      // The stand-ins listen on loopback.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s',
      WEBHOOK_POLL_INTERVAL: '250ms',
      WORKFLOW_ACTION_TIMEOUT: '5s',
    }));
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    // The server first: its pools hold sessions of the customer role.
    await server?.stop();
    await customer?.drop();
    await Promise.all([chat?.close(), twilio?.close(), lambda?.close(), sns?.close(), receiver?.close()]);
  });

  test('Teams, Discord, SMS, Lambda, SNS, PostgreSQL and webhook actions typed in the builder reach their targets', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'action-forms');
      const auth = { token: account.token };
      await httpExpect(201, base, 'POST', '/geofences', {
        ...auth,
        body: { name: 'Depot', geometry: { type: 'Polygon', coordinates: [DEPOT_RING] } },
      });
      const webhook = await httpExpect<{ secret: string }>(201, base, 'POST', '/webhooks', {
        ...auth,
        body: { name: 'Operations receiver', url: receiver.url },
      });
      secret = webhook.secret;

      await page.goto('/workflows/new');
      await page.waitForURL((url) => url.pathname === '/login');
      await signIn(page, account.email, account.password);
      await page.getByRole('heading', { level: 1, name: 'New workflow' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Every target');
      await page.getByRole('combobox', { name: 'Geofence' }).fill('Dep');
      await page.getByRole('option', { name: 'Depot' }).click();

      const teams = await addAction(page, 1, 'Microsoft Teams message');
      await fill(teams, { 'Teams webhook URL': chat.url(TEAMS_PATH), Message: 'Teams: {{device.name}}' }, [
        'Teams webhook URL',
      ]);
      const discord = await addAction(page, 2, 'Discord message');
      await fill(
        discord,
        { 'Discord webhook URL': chat.url(DISCORD_PATH), Message: 'Discord: {{geofence.name}}' },
        ['Discord webhook URL'],
      );
      const sms = await addAction(page, 3, 'SMS (Twilio)');
      await fill(
        sms,
        {
          To: '+4915112345678',
          From: '+15005550006',
          'Account SID': ACCOUNT_SID,
          'Auth token': AUTH_TOKEN,
          Message: 'SMS: {{device.name}} {{event_type}}',
          'API base URL (optional)': twilio.baseUrl,
        },
        ['Auth token'],
      );
      const lambdaAction = await addAction(page, 4, 'AWS Lambda');
      await fill(
        lambdaAction,
        {
          'Function name or ARN': FUNCTION,
          'AWS region': REGION,
          'Access key id': KEY_ID,
          'Secret access key': SECRET_KEY,
          'Endpoint (optional)': lambda.url,
        },
        ['Secret access key'],
      );
      const snsAction = await addAction(page, 5, 'AWS SNS');
      await fill(
        snsAction,
        {
          'Topic ARN': TOPIC,
          'AWS region': REGION,
          'Access key id': KEY_ID,
          'Secret access key': SECRET_KEY,
          'Endpoint (optional)': sns.url,
          'Subject (optional)': 'SNS: {{event_type}}',
          Message: 'SNS says {{device.name}} at {{geofence.name}}',
        },
        ['Secret access key'],
      );
      const database = await addAction(page, 6, 'PostgreSQL row');
      await fill(database, { 'Connection URL': customer.url(), Table: 'geofence_events' }, [
        'Connection URL',
      ]);
      const delivery = await addAction(page, 7, 'Webhook delivery');
      await delivery
        .getByLabel('Webhook', { exact: true })
        .selectOption({ label: `Operations receiver — ${receiver.url}` });
      await axe(page);
      await screenshot(page, 'workflow-builder-every-type');

      await page.getByRole('button', { name: 'Create workflow' }).click();
      await page.getByRole('status').filter({ hasText: 'Workflow saved.' }).waitFor();
      const workflowId = new URL(page.url()).pathname.split('/')[2] ?? '';
      const saved = await httpExpect<{ actions: Array<{ type: string; config: Record<string, unknown> }> }>(
        200,
        base,
        'GET',
        `/workflows/${workflowId}`,
        auth,
      );
      const chatMask = (path: string) => `${chat.url('')}/…${path.slice(-4)}`;
      const [t, d, s, l, n, db, w] = saved.actions.map((a) => a.config);
      assert.deepEqual(
        saved.actions.map((a) => a.type),
        ['teams', 'discord', 'sms', 'lambda', 'sns', 'database', 'webhook'],
      );
      assert.equal(t?.webhook_url, chatMask(TEAMS_PATH));
      assert.equal(t?.message, 'Teams: {{device.name}}');
      assert.equal(d?.webhook_url, chatMask(DISCORD_PATH));
      assert.deepEqual(s, {
        to: '+4915112345678',
        from: '+15005550006',
        account_sid: ACCOUNT_SID,
        auth_token: '…78dd',
        body: 'SMS: {{device.name}} {{event_type}}',
        api_base_url: twilio.baseUrl,
      });
      assert.deepEqual(l, {
        function_name: FUNCTION,
        region: REGION,
        access_key_id: KEY_ID,
        secret_access_key: '…EKEY',
        endpoint: lambda.url,
      });
      assert.equal(n?.secret_access_key, '…EKEY');
      assert.equal(n?.subject, 'SNS: {{event_type}}');
      assert.equal(db?.connection_url, customer.url().replace(DB_PASSWORD, '…'));
      assert.equal(db?.table, 'geofence_events');
      assert.equal(typeof w?.webhook_id, 'string');

      // "Test" runs every action with the sample event; each target checks what it receives.
      await page.getByRole('button', { name: 'Test', exact: true }).click();
      await page.getByTestId('run-status').filter({ hasText: 'success' }).waitFor({ timeout: 30_000 });
      const teamsSent = chat.accepted('teams');
      assert.equal(teamsSent.length, 1);
      assert.match(JSON.stringify(teamsSent[0]?.json), /Teams: Sample device/);
      assert.match(JSON.stringify(chat.accepted('discord')[0]?.json), /Discord: Depot/);
      const [message] = twilio.created();
      assert.equal(message?.form?.get('Body'), 'SMS: Sample device enter');
      assert.equal(message?.form?.get('To'), '+4915112345678');
      assert.equal(lambda.accepted.length, 1, 'signed with the secret key typed');
      assert.equal(lambda.accepted[0]?.functionName, FUNCTION);
      assert.equal(sns.accepted[0]?.message, 'SNS says Sample device at Depot');
      assert.equal(sns.accepted[0]?.subject, 'SNS: enter');
      const rows = await customer.admin.query<{ event_type: string }>(
        `select event_type from ${customer.name}.geofence_events`,
      );
      assert.deepEqual(
        rows.rows.map((r) => r.event_type),
        ['geofence.enter'],
      );
      assert.deepEqual(verified, [true], 'one delivery, its signature verified');
      assert.match(receiver.requests[0]?.body.toString('utf8') ?? '', /"event":"geofence\.enter"/);
      await axe(page);
    }));
});
