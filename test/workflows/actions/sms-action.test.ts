/**
 * The `sms` action against a loopback stand-in for Twilio's Messages API that checks the method,
 * the path with the account SID, basic auth and the form encoding: the message as Twilio sees it
 * (default and templated bodies, characters that need form encoding, the 1600-character limit),
 * Twilio's error code and message in the error, the timeout, the SSRF guard, and the auth token
 * never repeated in an outcome.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { Dispatcher } from 'undici';
import { createGuardedDispatcher } from '../../../src/outbound/outbound-guard.ts';
import type { ActionConfigs } from '../../../src/workflows/action-configs.schemas.ts';
import type { ActionOutcome } from '../../../src/workflows/actions/action.ts';
import { smsAction } from '../../../src/workflows/actions/sms.ts';
import { FakeTwilio } from '../../helpers/fake-twilio.ts';
import { eventContext, httpRuntime } from './action-fixtures.ts';

const ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
const AUTH_TOKEN = 'f3c1b2a4d5e6978812aa34bb56cc78dd';
const BASIC = Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64');

function assertNoToken(outcome: ActionOutcome): void {
  for (const secret of [AUTH_TOKEN, BASIC]) {
    assert.ok(!(outcome.errorMessage ?? '').includes(secret), 'errorMessage repeats the token');
    assert.ok(!(outcome.responseExcerpt ?? '').includes(secret), 'responseExcerpt repeats the token');
  }
}

describe('sms action', () => {
  let twilio: FakeTwilio;
  let dispatcher: Dispatcher;
  let config: ActionConfigs['sms'];

  before(async () => {
    twilio = await FakeTwilio.start(ACCOUNT_SID, AUTH_TOKEN);
    dispatcher = createGuardedDispatcher({ allowPrivate: true });
    config = {
      to: '+14155550123',
      from: '+14155550100',
      account_sid: ACCOUNT_SID,
      auth_token: AUTH_TOKEN,
      api_base_url: twilio.baseUrl,
    };
  });
  after(async () => {
    await dispatcher.close();
    await twilio.close();
  });
  beforeEach(() => twilio.reset());

  test('the default body is posted form-encoded with basic auth; Twilio answers 201', async () => {
    const outcome = await smsAction.execute(config, eventContext(), httpRuntime(dispatcher));
    assert.equal(outcome.success, true, outcome.errorMessage ?? '');
    assert.equal(outcome.statusCode, 201);
    assert.equal(outcome.errorMessage, null);
    assert.equal(twilio.requests.length, 1);
    const [request] = twilio.created();
    assert.ok(request, 'Twilio created the message');
    assert.equal(request.method, 'POST');
    assert.equal(request.path, `/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`);
    assert.equal(request.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(request.headers['user-agent'], 'Service-Webhooks/1.0');
    assert.equal(request.headers.authorization, `Basic ${BASIC}`);
    assert.deepEqual(Object.fromEntries(request.form ?? []), {
      To: '+14155550123',
      From: '+14155550100',
      Body: 'Truck 7 entered Depot North (52.52, 13.405) at 2026-03-14T09:26:53.589Z',
    });
    // The excerpt is Twilio's message resource: useful, and without a secret.
    const resource = JSON.parse(outcome.responseExcerpt ?? '{}');
    assert.match(resource.sid, /^SM[0-9a-f]{32}$/);
    assert.equal(resource.status, 'queued');
    assert.equal(resource.account_sid, ACCOUNT_SID);
    assertNoToken(outcome);
  });

  test('a templated body arrives exactly, characters that need form encoding included', async () => {
    const body = 'Alert: {{device.name}} {{event_type}} {{geofence.name}}\n{{point.lat}},{{point.lng}}';
    const outcome = await smsAction.execute(
      { ...config, body, api_base_url: `${twilio.baseUrl}/` },
      eventContext({ geofenceName: 'A&B=C+D %20 "Ü" <x> 😀', event_type: 'dwell' }),
      httpRuntime(dispatcher),
    );
    assert.equal(outcome.success, true, outcome.errorMessage ?? '');
    assert.equal(
      twilio.created()[0]?.form?.get('Body'),
      'Alert: Truck 7 dwell A&B=C+D %20 "Ü" <x> 😀\n52.52,13.405',
    );
  });

  test('a body over 1600 characters is cut to 1600, ending in an ellipsis', async () => {
    const outcome = await smsAction.execute(
      { ...config, body: `${'z'.repeat(1590)} {{geofence.name}} {{geofence.name}}` },
      eventContext(),
      httpRuntime(dispatcher),
    );
    assert.equal(outcome.success, true, outcome.errorMessage ?? '');
    const sent = twilio.created()[0]?.form?.get('Body') ?? '';
    assert.equal(sent.length, 1600);
    assert.equal(sent, `${'z'.repeat(1590)} Depot No…`);
  });

  test('a wrong token: Twilio’s 401 with its code and message, the token nowhere', async () => {
    const wrongToken = `${AUTH_TOKEN.slice(0, -4)}0000`;
    const outcome = await smsAction.execute(
      { ...config, auth_token: wrongToken },
      eventContext(),
      httpRuntime(dispatcher),
    );
    assert.equal(outcome.success, false);
    assert.equal(outcome.statusCode, 401);
    assert.equal(
      outcome.errorMessage,
      'Twilio answered HTTP 401 Unauthorized: error 20003: Authenticate (https://www.twilio.com/docs/errors/20003)',
    );
    assert.deepEqual(JSON.parse(outcome.responseExcerpt ?? '{}'), {
      code: 20003,
      message: 'Authenticate',
      more_info: 'https://www.twilio.com/docs/errors/20003',
      status: 401,
    });
    assert.ok(!(outcome.errorMessage ?? '').includes(wrongToken));
    assert.ok(!(outcome.responseExcerpt ?? '').includes(wrongToken));
    assert.equal(twilio.created().length, 0);
  });

  test('Twilio’s refusal of a field is reported with its code', async () => {
    const outcome = await smsAction.execute(
      { ...config, to: '+1555' },
      eventContext(),
      httpRuntime(dispatcher),
    );
    assert.equal(outcome.statusCode, 400);
    assert.equal(
      outcome.errorMessage,
      "Twilio answered HTTP 400 Bad Request: error 21211: Invalid 'To' Phone Number: +1555 " +
        '(https://www.twilio.com/docs/errors/21211)',
    );
  });

  test('an answer that is not Twilio’s JSON is quoted as text', async () => {
    twilio.answer({ raw: { status: 502, body: '<html><body>\n<h1>502 Bad Gateway</h1>\n</body></html>' } });
    const outcome = await smsAction.execute(config, eventContext(), httpRuntime(dispatcher));
    assert.equal(
      outcome.errorMessage,
      'Twilio answered HTTP 502 Bad Gateway: <html><body> <h1>502 Bad Gateway</h1> </body></html>',
    );
  });

  test('an answer that repeats the credentials has them blanked', async () => {
    twilio.answer({ status: 401, code: 20003, message: `Authenticate ${AUTH_TOKEN} as Basic ${BASIC}` });
    const outcome = await smsAction.execute(config, eventContext(), httpRuntime(dispatcher));
    assert.equal(
      outcome.errorMessage,
      'Twilio answered HTTP 401 Unauthorized: error 20003: Authenticate … as Basic … ' +
        '(https://www.twilio.com/docs/errors/20003)',
    );
    assertNoToken(outcome);
  });

  test('Twilio never answering fails at the timeout', async () => {
    twilio.answer({ hang: true });
    const outcome = await smsAction.execute(config, eventContext(), httpRuntime(dispatcher, 200));
    assert.deepEqual(outcome, {
      success: false,
      statusCode: null,
      errorMessage: 'Twilio did not answer within 200 ms',
      responseExcerpt: null,
    });
    assert.equal(twilio.requests.length, 1);
  });

  test('the SSRF guard refuses a loopback api_base_url before anything is sent', async () => {
    const guarded = createGuardedDispatcher({ allowPrivate: false });
    try {
      const outcome = await smsAction.execute(config, eventContext(), httpRuntime(guarded));
      assert.equal(outcome.success, false);
      assert.equal(
        outcome.errorMessage,
        'Could not reach Twilio: Refused to connect to 127.0.0.1: it is a loopback address ' +
          '(set WEBHOOK_ALLOW_PRIVATE_TARGETS=true to allow private targets); nothing was sent',
      );
      assert.equal(twilio.requests.length, 0);
    } finally {
      await guarded.close();
    }
  });

  test('no token or an empty body fails without sending', async () => {
    const { auth_token: _, ...withoutToken } = config;
    const noToken = await smsAction.execute(withoutToken, eventContext(), httpRuntime(dispatcher));
    assert.equal(noToken.errorMessage, 'No Twilio auth token is configured; nothing was sent');
    const empty = await smsAction.execute(
      { ...config, body: '{{#test}}only in tests{{/test}}' },
      eventContext(),
      httpRuntime(dispatcher),
    );
    assert.equal(empty.errorMessage, 'The SMS body rendered empty; nothing was sent');
    assert.equal(twilio.requests.length, 0);
  });
});
