/**
 * The `slack`, `discord` and `teams` actions against a loopback server that checks each service's
 * incoming-webhook format and answers like it: the request shapes, default and templated messages
 * (Slack's escaping, Discord's disabled mentions, the Teams card's facts), length limits, failure
 * answers in words, the timeout, redirects as failures, the SSRF guard, and the webhook URL's
 * path (the credential) never repeated in an outcome.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { Dispatcher } from 'undici';
import { createGuardedDispatcher } from '../../../src/outbound/outbound-guard.ts';
import type { ActionOutcome } from '../../../src/workflows/actions/action.ts';
import { discordAction } from '../../../src/workflows/actions/discord.ts';
import { slackAction } from '../../../src/workflows/actions/slack.ts';
import { teamsAction } from '../../../src/workflows/actions/teams.ts';
import {
  type ChatService,
  DISCORD_PATH,
  FakeChatServices,
  SLACK_PATH,
  TEAMS_PATH,
} from '../../helpers/fake-chat-services.ts';
import { eventContext, httpRuntime } from './action-fixtures.ts';

const DEFAULT_LINE = 'Truck 7 entered Depot North (52.52, 13.405) at 2026-03-14T09:26:53.589Z';

/** The secret-bearing pieces of each path: the whole path and its token segment. */
function secretsOf(path: string): string[] {
  return [path, path.split('/').at(-1) ?? path];
}

function assertNoSecret(outcome: ActionOutcome, path: string): void {
  for (const secret of secretsOf(path)) {
    assert.ok(!(outcome.errorMessage ?? '').includes(secret), `errorMessage repeats ${secret}`);
    assert.ok(!(outcome.responseExcerpt ?? '').includes(secret), `responseExcerpt repeats ${secret}`);
  }
}

function only(fake: FakeChatServices, service: ChatService) {
  assert.equal(fake.received.length, 1, 'exactly one request');
  const [request] = fake.received;
  assert.ok(request);
  assert.equal(request.service, service);
  assert.equal(request.problem, null, `the fake ${service} refused the request: ${request.problem}`);
  assert.equal(request.method, 'POST');
  assert.equal(request.headers['content-type'], 'application/json');
  assert.equal(request.headers['user-agent'], 'Service-Webhooks/1.0');
  return request;
}

describe('chat actions', () => {
  let fake: FakeChatServices;
  let dispatcher: Dispatcher;

  before(async () => {
    fake = await FakeChatServices.start();
    dispatcher = createGuardedDispatcher({ allowPrivate: true });
  });
  after(async () => {
    await dispatcher.close();
    await fake.close();
  });
  beforeEach(() => fake.reset());

  describe('slack', () => {
    test('default message: text and one mrkdwn section, answered 200 ok', async () => {
      const outcome = await slackAction.execute(
        { webhook_url: fake.url(SLACK_PATH) },
        eventContext(),
        httpRuntime(dispatcher),
      );
      assert.deepEqual(outcome, {
        success: true,
        statusCode: 200,
        errorMessage: null,
        responseExcerpt: 'ok',
      });
      const request = only(fake, 'slack');
      assert.equal(request.path, SLACK_PATH);
      assert.deepEqual(request.json, {
        text: DEFAULT_LINE,
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: DEFAULT_LINE } }],
      });
    });

    test('names from event data are escaped: no mention, link or channel ping can be forged', async () => {
      const context = eventContext({ geofenceName: '<@U123> & <!channel>', deviceName: 'A>B', test: true });
      await slackAction.execute({ webhook_url: fake.url(SLACK_PATH) }, context, httpRuntime(dispatcher));
      const expected =
        '[test] A&gt;B entered &lt;@U123&gt; &amp; &lt;!channel&gt; (52.52, 13.405) at 2026-03-14T09:26:53.589Z';
      assert.deepEqual(only(fake, 'slack').json, {
        text: expected,
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text: expected } }],
      });

      fake.reset();
      // The template's own mrkdwn stays; every value is escaped, triple mustaches included.
      const message = '*{{device.name}}* {{event_type}} {{{geofence.name}}} <https://example.com/map|map>';
      const outcome = await slackAction.execute(
        { webhook_url: fake.url(SLACK_PATH), message },
        context,
        httpRuntime(dispatcher),
      );
      assert.equal(outcome.success, true);
      const text = '*A&gt;B* enter &lt;@U123&gt; &amp; &lt;!channel&gt; <https://example.com/map|map>';
      assert.deepEqual(only(fake, 'slack').json, {
        text,
        blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
      });
    });

    test('a text over the section limit is cut to 3000 characters, never inside an escape', async () => {
      const message = `${'x'.repeat(2997)}{{geofence.name}}`;
      const context = eventContext({ geofenceName: '&&&&' });
      const outcome = await slackAction.execute(
        { webhook_url: fake.url(SLACK_PATH), message },
        context,
        httpRuntime(dispatcher),
      );
      assert.equal(outcome.success, true, outcome.errorMessage ?? '');
      const { text } = only(fake, 'slack').json as { text: string };
      assert.equal(text, `${'x'.repeat(2997)}…`);
    });

    test('Slack’s error answers become the error message, with the status', async () => {
      const cases = [
        { status: 404, body: 'no_service', words: 'Slack answered HTTP 404 Not Found: no_service' },
        {
          status: 400,
          body: 'invalid_payload',
          words: 'Slack answered HTTP 400 Bad Request: invalid_payload',
        },
        {
          status: 410,
          body: 'channel_is_archived',
          words: 'Slack answered HTTP 410 Gone: channel_is_archived',
        },
      ];
      for (const { status, body, words } of cases) {
        fake.reset();
        fake.answer(SLACK_PATH, { status, body });
        const outcome = await slackAction.execute(
          { webhook_url: fake.url(SLACK_PATH) },
          eventContext(),
          httpRuntime(dispatcher),
        );
        assert.deepEqual(outcome, {
          success: false,
          statusCode: status,
          errorMessage: words,
          responseExcerpt: body,
        });
        assert.equal(fake.received.length, 1);
      }
    });

    test('an empty rendered message or a missing URL fails without sending', async () => {
      const empty = await slackAction.execute(
        { webhook_url: fake.url(SLACK_PATH), message: '{{no.such.variable}}' },
        eventContext(),
        httpRuntime(dispatcher),
      );
      assert.equal(empty.success, false);
      assert.match(empty.errorMessage ?? '', /rendered empty/);
      const missing = await slackAction.execute({}, eventContext(), httpRuntime(dispatcher));
      assert.equal(missing.success, false);
      assert.match(missing.errorMessage ?? '', /No Slack webhook URL/);
      const wrongScheme = await slackAction.execute(
        { webhook_url: `ftp://127.0.0.1${SLACK_PATH}` },
        eventContext(),
        httpRuntime(dispatcher),
      );
      assert.equal(wrongScheme.errorMessage, 'The Slack URL is not a valid http(s) URL; nothing was sent');
      assert.equal(fake.received.length, 0);
    });
  });

  describe('discord', () => {
    test('default message as content, mentions disabled, answered 204', async () => {
      const outcome = await discordAction.execute(
        { webhook_url: fake.url(DISCORD_PATH) },
        eventContext({ event_type: 'exit' }),
        httpRuntime(dispatcher),
      );
      assert.deepEqual(outcome, {
        success: true,
        statusCode: 204,
        errorMessage: null,
        responseExcerpt: null,
      });
      const request = only(fake, 'discord');
      assert.equal(request.path, DISCORD_PATH);
      assert.deepEqual(request.json, {
        content: 'Truck 7 left Depot North (52.52, 13.405) at 2026-03-14T09:26:53.589Z',
        allowed_mentions: { parse: [] },
      });
    });

    test('a template renders as plain text; @everyone from event data is sent but cannot ping', async () => {
      const message = '**{{device.name}}** {{event}} "{{geofence.name}}"\n{{point.lat}},{{point.lng}}';
      await discordAction.execute(
        { webhook_url: fake.url(DISCORD_PATH), message },
        eventContext({ geofenceName: '@everyone <b>&</b>', event_type: 'dwell' }),
        httpRuntime(dispatcher),
      );
      assert.deepEqual(only(fake, 'discord').json, {
        content: '**Truck 7** geofence.dwell "@everyone <b>&</b>"\n52.52,13.405',
        allowed_mentions: { parse: [] },
      });
    });

    test('content over 2000 characters is cut with an ellipsis, whole characters only', async () => {
      // A surrogate pair straddles the cut: it must go whole, not leave half a character.
      const message = `${'y'.repeat(1998)}{{geofence.name}}`;
      const outcome = await discordAction.execute(
        { webhook_url: fake.url(DISCORD_PATH), message },
        eventContext({ geofenceName: '😀😀😀' }),
        httpRuntime(dispatcher),
      );
      assert.equal(outcome.success, true, outcome.errorMessage ?? '');
      const { content } = only(fake, 'discord').json as { content: string };
      assert.equal(content, `${'y'.repeat(1998)}…`);
      assert.ok(content.length <= 2000);
    });

    test('Discord’s JSON error answer is quoted in the error message', async () => {
      const body = '{"message": "Unknown Webhook", "code": 10015}';
      fake.answer(DISCORD_PATH, { status: 404, body, headers: { 'content-type': 'application/json' } });
      const outcome = await discordAction.execute(
        { webhook_url: fake.url(DISCORD_PATH) },
        eventContext(),
        httpRuntime(dispatcher),
      );
      assert.deepEqual(outcome, {
        success: false,
        statusCode: 404,
        errorMessage: `Discord answered HTTP 404 Not Found: ${body}`,
        responseExcerpt: body,
      });
    });
  });

  describe('teams', () => {
    test('a MessageCard titled with the event, the default line as text, the facts; answered 200 "1"', async () => {
      const outcome = await teamsAction.execute(
        { webhook_url: fake.url(TEAMS_PATH) },
        eventContext(),
        httpRuntime(dispatcher),
      );
      assert.deepEqual(outcome, { success: true, statusCode: 200, errorMessage: null, responseExcerpt: '1' });
      const request = only(fake, 'teams');
      assert.equal(request.path, TEAMS_PATH);
      assert.deepEqual(request.json, {
        '@type': 'MessageCard',
        '@context': 'https://schema.org/extensions',
        summary: 'Truck 7 entered Depot North',
        themeColor: '2EB67D',
        title: 'Truck 7 entered Depot North',
        text: DEFAULT_LINE,
        sections: [
          {
            facts: [
              { name: 'Device', value: 'Truck 7' },
              { name: 'Geofence', value: 'Depot North' },
              { name: 'Event', value: 'geofence.enter' },
              { name: 'Point', value: '52.52, 13.405' },
              { name: 'Time', value: '2026-03-14T09:26:53.589Z' },
            ],
          },
        ],
      });
    });

    test('a template becomes the card text, unescaped; the facts stay', async () => {
      const message = '{{device.name}} & {{geofence.name}}: speed {{metadata.speed_kmh}} km/h';
      await teamsAction.execute(
        { webhook_url: fake.url(TEAMS_PATH), message },
        eventContext({ geofenceName: '<Yard>', event_type: 'exit' }),
        httpRuntime(dispatcher),
      );
      const card = only(fake, 'teams').json as { text: string; title: string; sections: unknown[] };
      assert.equal(card.text, 'Truck 7 & <Yard>: speed 42 km/h');
      assert.equal(card.title, 'Truck 7 left <Yard>');
      assert.equal(card.sections.length, 1);
    });

    test('a refused card is reported with Teams’s words', async () => {
      fake.answer(TEAMS_PATH, { status: 400, body: 'Summary or Text is required.' });
      const outcome = await teamsAction.execute(
        { webhook_url: fake.url(TEAMS_PATH) },
        eventContext(),
        httpRuntime(dispatcher),
      );
      assert.equal(outcome.errorMessage, 'Teams answered HTTP 400 Bad Request: Summary or Text is required.');
      assert.equal(outcome.statusCode, 400);
    });
  });

  describe('every chat action', () => {
    const actions = [
      { name: 'Slack', path: SLACK_PATH, run: slackAction.execute },
      { name: 'Discord', path: DISCORD_PATH, run: discordAction.execute },
      { name: 'Teams', path: TEAMS_PATH, run: teamsAction.execute },
    ];

    test('a target that never answers fails at the timeout, with no status', async () => {
      for (const { name, path, run } of actions) {
        fake.reset();
        fake.answer(path, { hang: true });
        const outcome = await run(
          { webhook_url: fake.url(path) },
          eventContext(),
          httpRuntime(dispatcher, 200),
        );
        assert.deepEqual(outcome, {
          success: false,
          statusCode: null,
          errorMessage: `${name} did not answer within 200 ms`,
          responseExcerpt: null,
        });
        assert.equal(fake.received.length, 1, 'the request was sent');
      }
    });

    test('a status that arrives in time decides even if the body never ends', async () => {
      fake.answer(SLACK_PATH, { stallAfterHeaders: true });
      const outcome = await slackAction.execute(
        { webhook_url: fake.url(SLACK_PATH) },
        eventContext(),
        httpRuntime(dispatcher, 200),
      );
      assert.equal(outcome.success, true);
      assert.equal(outcome.statusCode, 200);
    });

    test('a redirect is a failure and is not followed', async () => {
      for (const { name, path, run } of actions) {
        fake.reset();
        fake.answer(path, { status: 302, headers: { location: fake.url(SLACK_PATH) } });
        const outcome = await run({ webhook_url: fake.url(path) }, eventContext(), httpRuntime(dispatcher));
        assert.equal(outcome.success, false);
        assert.equal(outcome.statusCode, 302);
        assert.equal(outcome.errorMessage, `${name} answered HTTP 302 Found (redirects are not followed)`);
        assert.equal(fake.received.length, 1, 'only the first request was made');
      }
    });

    test('the SSRF guard refuses a loopback target before anything is sent', async () => {
      const guarded = createGuardedDispatcher({ allowPrivate: false });
      try {
        for (const { name, path, run } of actions) {
          const outcome = await run({ webhook_url: fake.url(path) }, eventContext(), httpRuntime(guarded));
          assert.equal(outcome.success, false);
          assert.equal(outcome.statusCode, null);
          assert.equal(
            outcome.errorMessage,
            `Could not reach ${name}: Refused to connect to 127.0.0.1: it is a loopback address ` +
              '(set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow private targets); nothing was sent',
          );
          assertNoSecret(outcome, path);
        }
        assert.equal(fake.received.length, 0, 'the fake received nothing');
      } finally {
        await guarded.close();
      }
    });

    test('the webhook URL path is never repeated, even when the target echoes it', async () => {
      for (const { name, path, run } of actions) {
        fake.reset();
        const token = path.split('/').at(-1) ?? '';
        const body = `invalid_token: ${fake.url(path)} (token ${token}, ${encodeURIComponent(path)})`;
        fake.answer(path, { status: 403, body });
        const outcome = await run({ webhook_url: fake.url(path) }, eventContext(), httpRuntime(dispatcher));
        assert.equal(outcome.statusCode, 403);
        assert.match(
          outcome.errorMessage ?? '',
          new RegExp(`^${name} answered HTTP 403 Forbidden: invalid_token`),
        );
        assert.match(outcome.responseExcerpt ?? '', /^invalid_token: http:\/\/127\.0\.0\.1:\d+…/);
        assertNoSecret(outcome, path);
      }
    });

    test('a refused connection is described without the URL', async () => {
      const closed = await FakeChatServices.start();
      const url = closed.url(DISCORD_PATH);
      await closed.close();
      for (const { name, path, run } of actions) {
        const target = url.replace(DISCORD_PATH, path);
        const outcome = await run({ webhook_url: target }, eventContext(), httpRuntime(dispatcher));
        assert.equal(outcome.errorMessage, `Could not reach ${name}: Connection refused (ECONNREFUSED)`);
        assertNoSecret(outcome, path);
      }
    });
  });
});
