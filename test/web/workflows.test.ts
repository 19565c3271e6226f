/**
 * The workflows area in a real browser against the real server, its action worker sending to local
 * fakes (Slack's incoming webhook, an SMTP sink): a workflow built in the builder by typing, picking
 * the trigger geofence by name and then on the map, with a Slack and an e-mail action whose
 * templates preview live; a template that does not parse and a 422 from the server shown at their
 * fields. A device entering the geofence runs both actions; the run page shows them `success`, and
 * the fake Slack and the sink got the rendered texts. "Test" sends exactly what the preview showed.
 * A Slack answering 500 fails the run for good; "Retry failed actions" succeeds once it recovers.
 * A save based on a version someone else has changed since is refused (412) and says so.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FakeChatServices, SLACK_PATH } from '../helpers/fake-chat-services.ts';
import { type SmtpSink, startSmtpSink } from '../helpers/smtp-sink.ts';
import { httpExpect } from '../helpers/spawned-server.ts';
import { axe, inPage, screenshot, signIn, startServerAndBrowser } from './browser.ts';
import { type Account, type DashboardServer, registerAccount } from './dashboard-server.ts';

/** Two squares side by side in Berlin; the trigger's name has characters Slack escapes. */
const DEPOT = 'Depot & Yard <North>';
const DEPOT_RING = [
  [13.404, 52.518],
  [13.408, 52.518],
  [13.408, 52.521],
  [13.404, 52.521],
  [13.404, 52.518],
];
const ELSEWHERE_RING = [
  [13.399, 52.518],
  [13.403, 52.518],
  [13.403, 52.521],
  [13.399, 52.521],
  [13.399, 52.518],
];
const SLACK_ESCAPED = 'Depot &amp; Yard &lt;North&gt;';

interface RunOut {
  id: string;
  status: string;
  test: boolean;
}

async function openSignedIn(page: Page, account: Account, path: string): Promise<void> {
  await page.goto(path);
  await page.waitForURL((url) => url.pathname === '/login');
  await signIn(page, account.email, account.password);
  await page.waitForURL((url) => url.pathname === path);
}

/** The runs of a workflow once `count` exist (the dispatcher and the worker run beside the API). */
async function runsOnceThere(base: string, account: Account, workflowId: string, count: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const page = await httpExpect<{ results: RunOut[] }>(200, base, 'GET', `/workflows/${workflowId}/runs`, {
      token: account.token,
    });
    if (page.results.length >= count) return page.results;
    if (Date.now() > deadline) throw new Error(`no ${count} runs of ${workflowId} in time`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Waits for the run page (which refreshes itself while pending) to show `status`. */
async function runStatus(page: Page, status: string): Promise<void> {
  await page.getByTestId('run-status').filter({ hasText: status }).waitFor({ timeout: 20_000 });
}

describe('dashboard: workflows', () => {
  let server: DashboardServer;
  let browser: Browser;
  let base: string;
  let chat: FakeChatServices;
  let sink: SmtpSink;

  before(async () => {
    [chat, sink] = await Promise.all([FakeChatServices.start(), startSmtpSink()]);
    ({ server, browser } = await startServerAndBrowser({
      SMTP_URL: sink.url,
      // The fakes listen on loopback; one retry a second after the first failure, then for good.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s',
      WEBHOOK_POLL_INTERVAL: '250ms',
      WORKFLOW_ACTION_TIMEOUT: '5s',
    }));
    base = server.base;
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await chat?.close();
    await sink?.close();
  });

  test('built in the builder → an enter runs Slack and e-mail → Test sends what the preview showed → a failure is retried', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'flows');
      const auth = { token: account.token };
      for (const [name, ring] of [
        [DEPOT, DEPOT_RING],
        ['Elsewhere', ELSEWHERE_RING],
      ] as const) {
        await httpExpect(201, base, 'POST', '/geofences', {
          ...auth,
          body: { name, geometry: { type: 'Polygon', coordinates: [ring] } },
        });
      }
      const device = await httpExpect<{ id: string }>(201, base, 'POST', '/devices', {
        ...auth,
        body: { name: 'Van 7' },
      });

      await openSignedIn(page, account, '/workflows');
      await page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
      await page.getByText('No workflows yet.').waitFor();
      await axe(page);
      await screenshot(page, 'workflows-empty');

      // The builder: name, trigger geofence by name (the wrong one first), then on the map.
      await page.getByRole('link', { name: 'New workflow' }).click();
      await page.getByRole('heading', { level: 1, name: 'New workflow' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Depot alerts');
      const geofence = page.getByRole('combobox', { name: 'Geofence' });
      await geofence.fill('Else');
      await page.getByRole('option', { name: 'Elsewhere' }).click();
      assert.equal(await geofence.inputValue(), 'Elsewhere');
      await page.getByRole('button', { name: 'Pick on a map' }).click();
      const map = page.getByRole('application', { name: /Map of geofences/ });
      await map.waitFor();
      await page.getByText('Click a geofence to trigger on it').waitFor();
      await pickOnMap(page, geofence, DEPOT);
      await axe(page);
      await screenshot(page, 'workflow-builder-map', map);
      await page.getByRole('button', { name: 'Hide the map' }).click();

      // A Slack action: a template typed and completed with a variable chip, previewed live.
      await page.getByLabel('New action type').selectOption({ label: 'Slack message' });
      await page.getByRole('button', { name: 'Add action' }).click();
      const slack = page.getByRole('group', { name: 'Action 1: Slack message' });
      const slackUrl = slack.getByLabel('Slack webhook URL', { exact: true });
      assert.equal(await slackUrl.getAttribute('type'), 'password');
      await slackUrl.fill('not a url');
      await slack.getByLabel('Show slack webhook url').click();
      assert.equal(await slackUrl.getAttribute('type'), 'text');
      const message = slack.getByLabel('Message', { exact: true });
      await message.fill('{{device.name}} entered {{geofence.name}} (');
      await slack.getByText('Insert a variable').click();
      await slack.getByRole('button', { name: '{{event_type}}' }).click();
      await message.press('End');
      await message.pressSequentially(')');
      assert.equal(await message.inputValue(), '{{device.name}} entered {{geofence.name}} ({{event_type}})');
      const slackPreview = slack.getByTestId('preview-message');
      const previewed = `Sample device entered ${SLACK_ESCAPED} (enter)`;
      await slackPreview.filter({ hasText: previewed }).waitFor();
      assert.equal(await slackPreview.textContent(), previewed);
      // The sample point reads as written (the centre of the Depot, 13.405999999999999 unrounded), and a
      // variable that does not exist is named rather than silently left empty.
      await message.fill('{{device.name}} at {{point.lat}}, {{point.lng}}{{bogus.var}}');
      await slackPreview.filter({ hasText: 'Sample device at 52.5195, 13.406' }).waitFor();
      assert.equal(await slackPreview.textContent(), 'Sample device at 52.5195, 13.406');
      await slack.getByTestId('unknown-message').filter({ hasText: '{{bogus.var}}' }).waitFor();
      await message.fill('{{device.name}} entered {{geofence.name}} ({{event_type}})');
      await slackPreview.filter({ hasText: previewed }).waitFor();
      assert.equal(await slack.getByTestId('unknown-message').count(), 0);

      // An e-mail action whose subject does not parse: the problem shows before anything is sent.
      await page.getByLabel('New action type').selectOption({ label: 'E-mail' });
      await page.getByRole('button', { name: 'Add action' }).click();
      const email = page.getByRole('group', { name: 'Action 2: E-mail' });
      await email.getByLabel('To', { exact: true }).fill('ops@example.com');
      const subject = email.getByLabel('Subject', { exact: true });
      await subject.fill('{{#device}}{{name}} at {{geofence.name}}');
      await email
        .getByRole('alert')
        .filter({ hasText: /Invalid template: Unclosed section "device"/ })
        .waitFor();
      assert.equal(await subject.getAttribute('aria-invalid'), 'true');
      await page.getByRole('button', { name: 'Create workflow' }).click();
      await page.getByRole('alert').filter({ hasText: 'One thing to fix before saving' }).waitFor();
      // The problem is named as the form names the field, not by its key (`subject`).
      await page.getByRole('alert').filter({ hasText: 'Action 2 (Subject): Invalid template' }).waitFor();
      await axe(page);
      await screenshot(page, 'workflow-builder-problems', email);
      await subject.fill('{{device.name}} at {{geofence.name}}');
      await email
        .getByTestId('preview-subject')
        .filter({ hasText: `Sample device at ${DEPOT}` })
        .waitFor();

      // The server refuses the Slack URL: its 422 is shown at that field.
      watch.allowHttpError(422, '/api/v1/workflows');
      await page.getByRole('button', { name: 'Create workflow' }).click();
      await slack.getByRole('alert').waitFor();
      assert.equal(await slackUrl.getAttribute('aria-invalid'), 'true');
      await slackUrl.fill(chat.url(SLACK_PATH));
      await page.getByRole('button', { name: 'Create workflow' }).click();
      await page.getByRole('status').filter({ hasText: 'Workflow saved.' }).waitFor();
      await page.getByRole('heading', { level: 1, name: 'Depot alerts' }).waitFor();
      const workflowId = new URL(page.url()).pathname.split('/')[2] ?? '';
      // Saved with the secret masked: the form shows the mask, not the URL.
      const savedUrl = page
        .getByRole('group', { name: 'Action 1: Slack message' })
        .getByLabel('Slack webhook URL', { exact: true });
      assert.match(await savedUrl.inputValue(), /^http:\/\/127\.0\.0\.1:\d+\/…\w{4}$/);
      await axe(page);
      await screenshot(page, 'workflow-builder-saved');

      // A device enters the geofence: one run, both actions sent.
      const now = Date.now();
      for (const [coordinates, secondsAgo] of [
        [[13.412, 52.5195], 2],
        [[13.406, 52.5195], 1],
      ] as const) {
        await httpExpect(201, base, 'POST', `/devices/${device.id}/locations`, {
          ...auth,
          body: { coordinates, accuracy: 5, timestamp: new Date(now - secondsAgo * 1000).toISOString() },
        });
      }
      const [enterRun] = await runsOnceThere(base, account, workflowId, 1);
      assert.ok(enterRun);
      await page.getByRole('link', { name: 'Runs', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Runs of Depot alerts' }).waitFor();
      await page.getByRole('table').getByRole('link').first().click();
      await runStatus(page, 'success');
      await page.getByRole('region', { name: /^Action 1: Slack message success$/ }).waitFor();
      await page.getByRole('region', { name: /^Action 2: E-mail success$/ }).waitFor();
      assert.deepEqual(
        chat.accepted('slack').map((r) => (r.json as { text: string }).text),
        [`Van 7 entered ${SLACK_ESCAPED} (enter)`],
      );
      const mail = await sink.waitFor((m) => m.subject === `Van 7 at ${DEPOT}`);
      assert.deepEqual(mail.to, ['ops@example.com']);
      await axe(page);
      await screenshot(page, 'workflow-run-success');

      // Test: the sample event, rendered exactly as the preview showed it.
      await page.getByRole('button', { name: 'Test', exact: true }).click();
      await page.waitForURL((url) => url.pathname !== `/workflows/${workflowId}/runs/${enterRun.id}`);
      await runStatus(page, 'success');
      await page.getByText('workflow_test_').waitFor();
      const slackTexts = chat.accepted('slack').map((r) => (r.json as { text: string }).text);
      assert.equal(slackTexts.at(-1), previewed);

      // Slack fails for good (500 twice): the run fails, its attempts show why.
      chat.answer(SLACK_PATH, { status: 500, body: 'slack is down' });
      await page.getByRole('button', { name: 'Test', exact: true }).click();
      await runStatus(page, 'failed');
      const failed = page.getByRole('region', { name: /^Action 1: Slack message failed$/ });
      const attempts = failed.getByRole('table', { name: /Attempts of/ });
      assert.equal(await attempts.locator('tbody tr').count(), 2);
      await attempts.getByText('HTTP 500').first().waitFor();
      await attempts.getByText('slack is down').first().waitFor();
      await page.getByRole('region', { name: /^Action 2: E-mail success$/ }).waitFor();
      await axe(page);
      await screenshot(page, 'workflow-run-failed');

      // Slack recovers: "Retry failed actions" runs the failed action again, and the run succeeds.
      chat.reset();
      await page.getByRole('button', { name: 'Retry failed actions' }).click();
      await page.getByRole('status').filter({ hasText: 'The failed actions are queued again.' }).waitFor();
      await runStatus(page, 'success');
      assert.equal(chat.accepted('slack').length, 1);
      await page.getByRole('region', { name: /^Action 1: Slack message success$/ }).waitFor();

      // The runs list, filtered by status in the address.
      await page.getByRole('link', { name: 'Runs', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Runs of Depot alerts' }).waitFor();
      await page.getByLabel('Status').selectOption('success');
      await page.waitForURL((url) => url.searchParams.get('status') === 'success');
      await page.getByText('1–3 of 3').waitFor();
      await axe(page);
      await screenshot(page, 'workflow-runs');

      // The list, filtered by state; then an edit that leaves the stored secret alone.
      await page.getByRole('link', { name: 'Workflows', exact: true }).first().click();
      await page.getByRole('heading', { level: 1, name: 'Workflows' }).waitFor();
      await page.getByLabel('State').selectOption('false');
      await page.waitForURL((url) => url.searchParams.get('enabled') === 'false');
      await page.getByText('No workflows match this filter.').waitFor();
      await page.getByLabel('State').selectOption('true');
      const row = page.getByRole('row', { name: /Depot alerts/ });
      await row.getByText(`enter · ${DEPOT}`).waitFor();
      await axe(page);
      await screenshot(page, 'workflows-list');

      await row.getByRole('link', { name: 'Depot alerts', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Depot alerts' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Depot alerts (day)');
      // What the page sends, read where the request leaves it (its body is a stream to DevTools).
      let sentBody: string | null = null;
      await page.route(`**/api/v1/workflows/${workflowId}`, async (route) => {
        if (route.request().method() === 'PATCH') sentBody = route.request().postData();
        await route.continue();
      });
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('status').filter({ hasText: 'Workflow saved.' }).waitFor();
      const sent = JSON.parse(sentBody ?? 'null') as { actions: Array<{ config: Record<string, unknown> }> };
      assert.equal(sent.actions[0]?.config.webhook_url, undefined, 'an unchanged secret is not sent back');
      await page.getByRole('heading', { level: 1, name: 'Depot alerts (day)' }).waitFor();
      chat.reset();
      await page.getByRole('button', { name: 'Test', exact: true }).click();
      await runStatus(page, 'success');
      assert.equal(chat.accepted('slack').length, 1, 'the stored Slack URL still works');
    }));

  test('a save based on a version someone else has changed since is refused, and says so', () =>
    inPage(browser, base, async (page, watch) => {
      const account = await registerAccount(base, 'flow-versions');
      const auth = { token: account.token };
      const geofence = await httpExpect<{ id: string }>(201, base, 'POST', '/geofences', {
        ...auth,
        body: { name: DEPOT, geometry: { type: 'Polygon', coordinates: [DEPOT_RING] } },
      });
      const slack = (channel: string, path: string) => ({
        type: 'slack',
        config: { webhook_url: `https://hooks.slack.com/services/${path}`, message: `to ${channel}` },
      });
      const workflow = await httpExpect<{ id: string }>(201, base, 'POST', '/workflows', {
        ...auth,
        body: {
          name: 'Two channels',
          trigger: { geofence_id: geofence.id, event_types: ['enter'] },
          actions: [slack('alerts', 'T0/B0/alertsSecret'), slack('billing', 'T1/B1/billingSecret')],
        },
      });

      await openSignedIn(page, account, `/workflows/${workflow.id}`);
      await page.getByRole('heading', { level: 1, name: 'Two channels' }).waitFor();
      // Meanwhile someone else swaps the two actions and renames the workflow.
      await httpExpect(200, base, 'PATCH', `/workflows/${workflow.id}`, {
        ...auth,
        body: {
          name: 'Two channels, swapped',
          actions: [slack('billing', 'T1/B1/billingSecret'), slack('alerts', 'T0/B0/alertsSecret')],
        },
      });

      // This page still shows version 1: saving it (secrets left out) would give each action the
      // other's Slack URL, so the save is refused.
      watch.allowHttpError(412, `/api/v1/workflows/${workflow.id}`);
      await page.getByLabel('Name', { exact: true }).fill('Renamed here');
      await page.getByRole('button', { name: 'Save changes' }).click();
      const alert = page
        .getByRole('alert')
        .filter({ hasText: 'Someone else saved this workflow after you opened it' });
      await alert.waitFor();
      await axe(page);
      const stored = await httpExpect<{
        name: string;
        version: number;
        actions: Array<{ config: { message: string } }>;
      }>(200, base, 'GET', `/workflows/${workflow.id}`, auth);
      assert.deepEqual(
        [stored.name, stored.version, stored.actions.map((a) => a.config.message)],
        ['Two channels, swapped', 2, ['to billing', 'to alerts']],
      );

      await alert.getByRole('button', { name: 'Load their version' }).click();
      await page.getByRole('heading', { level: 1, name: 'Two channels, swapped' }).waitFor();
      assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'Two channels, swapped');
    }));

  test('a template past its rendering bounds previews the message an attempt would fail with', () =>
    inPage(browser, base, async (page) => {
      const account = await registerAccount(base, 'flow-bounds');
      // The trigger geofence's metadata is the preview's sample data: a list of 400 stops.
      const stops = Array.from({ length: 400 }, (_, i) => ({ n: i }));
      await httpExpect(201, base, 'POST', '/geofences', {
        token: account.token,
        body: { name: 'Hub', geometry: { type: 'Polygon', coordinates: [DEPOT_RING] }, metadata: { stops } },
      });
      await openSignedIn(page, account, '/workflows/new');
      await page.getByRole('heading', { level: 1, name: 'New workflow' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Stops');
      await page.getByRole('combobox', { name: 'Geofence' }).fill('Hub');
      await page.getByRole('option', { name: 'Hub' }).click();
      await page.getByLabel('New action type').selectOption({ label: 'E-mail' });
      await page.getByRole('button', { name: 'Add action' }).click();
      const email = page.getByRole('group', { name: 'Action 1: E-mail' });
      await email.getByLabel('To', { exact: true }).fill('ops@example.com');

      // Three sections over the 400 stops: 64 million iterations unbounded; the preview stops at
      // 10,000 and says so, as the attempt would.
      const body = email.getByLabel('Body', { exact: true });
      const loop = (inner: string) => `{{#geofence.metadata.stops}}${inner}{{/geofence.metadata.stops}}`;
      const nested = loop(loop(loop('{{n}}')));
      await body.fill(nested.slice(0, -1));
      await body.pressSequentially('}');
      await email
        .getByRole('alert')
        .filter({ hasText: 'Template exceeds 10000 section iterations' })
        .waitFor();
      assert.equal(await body.getAttribute('aria-invalid'), 'true');
      assert.equal(await email.getByTestId('preview-body').count(), 0, 'no preview text beside the message');
      await axe(page);
      await screenshot(page, 'workflow-builder-template-bounds', email);

      // The tab kept working: one level previews the list at once.
      await body.fill(loop('{{n}} '));
      const preview = email.getByTestId('preview-body');
      await preview.filter({ hasText: '0 1 2 3' }).waitFor();
      assert.equal((await preview.textContent())?.trim(), stops.map((s) => s.n).join(' '));
      assert.equal(await email.getByRole('alert').count(), 0);
    }));
});

/**
 * Clicks across the right half of the trigger map (the chosen geofence is fitted in the middle,
 * its neighbour to the east) until the picker names `name`, as a user would try the shapes.
 */
async function pickOnMap(page: Page, picker: ReturnType<Page['getByRole']>, name: string): Promise<void> {
  const map = page.getByRole('application', { name: /Map of geofences/ });
  await map.scrollIntoViewIfNeeded();
  const box = await map.boundingBox();
  if (!box) throw new Error('no map');
  const y = box.y + box.height / 2;
  for (let share = 0.55; share < 0.97; share += 0.03) {
    const x = box.x + box.width * share;
    await page.mouse.move(x - 1, y - 1);
    await page.mouse.move(x, y);
    await page.mouse.click(x, y);
    if ((await picker.inputValue()) === name) return;
  }
  throw new Error(`no click on the map chose ${name}`);
}
