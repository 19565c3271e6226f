/**
 * Every validation error of the workflow record (contract §1, §6): the exact 422 `detail` array of
 * schema rules (the action `type` discriminator, each type's config), of the rules the service
 * checks (templates, secrets required on creation, chat URL schemes) on create and on PATCH, and
 * the 400 of a literal private target address when WEBHOOK_ALLOW_PRIVATE_TARGETS is not set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { circle, createGeofence } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import { type Issue, issuesOf } from '../helpers/validation-issues.ts';
import type { WorkflowOut } from './workflow-helpers.ts';

type Action = { type?: string; config?: Record<string, unknown> };

const EMAIL: Action = { type: 'email', config: { to: ['ops@example.com'] } };
const SLACK: Action = {
  type: 'slack',
  config: { webhook_url: 'https://hooks.slack.com/services/T1/B2/abc' },
};
const SMS: Action = {
  type: 'sms',
  config: {
    to: '+14155550123',
    from: '+14155550100',
    account_sid: 'AC0123456789abcdef0123456789abcdef',
    auth_token: 'twilio-token-0123456789',
  },
};
const LAMBDA: Action = {
  type: 'lambda',
  config: {
    function_name: 'geofence-handler',
    region: 'eu-west-1',
    access_key_id: 'AKIAIOSFODNN7EXAMPLE',
    secret_access_key: 'lambda-secret-0123456789',
  },
};
const SNS: Action = {
  type: 'sns',
  config: {
    topic_arn: 'arn:aws:sns:eu-west-1:123456789012:events',
    region: 'eu-west-1',
    access_key_id: 'AKIAIOSFODNN7EXAMPLE',
    secret_access_key: 'sns-secret-0123456789',
  },
};
const DATABASE: Action = {
  type: 'database',
  config: { connection_url: 'postgres://writer:pw-0123456789@db.example.com:5432/ops', table: 'events' },
};

const TYPES_MSG =
  'Input should be "webhook", "slack", "email", "sms", "lambda", "sns", "teams", "discord" or "database"';

const with_ = (action: Action, config: Record<string, unknown>): Action => ({
  type: action.type,
  config: { ...action.config, ...config },
});
const without = (action: Action, field: string): Action => {
  const config = { ...action.config };
  delete config[field];
  return { type: action.type, config };
};
const at = (i: number, ...rest: Array<string | number>) => ['body', 'actions', i, ...rest];
const issue = (type: string, loc: Array<string | number>, msg: string): Issue => ({ type, loc, msg });

/** What is wrong, the actions (or the trigger's event types) sent, and the exact detail answered. */
interface Case {
  what: string;
  actions?: Action[];
  eventTypes?: unknown[];
  detail: Issue[];
}

const CASES: Case[] = [
  {
    what: 'unknown action type',
    actions: [EMAIL, { type: 'fax', config: {} }],
    detail: [issue('literal_error', at(1, 'type'), TYPES_MSG)],
  },
  {
    what: 'missing type',
    actions: [{ config: {} }],
    detail: [issue('missing', at(0, 'type'), 'Field required')],
  },
  {
    what: 'type not a string',
    actions: [{ type: 5 as unknown as string, config: {} }],
    detail: [issue('literal_error', at(0, 'type'), TYPES_MSG)],
  },
  {
    what: 'type null',
    actions: [{ type: null as unknown as string, config: {} }],
    detail: [issue('literal_error', at(0, 'type'), TYPES_MSG)],
  },
  {
    what: 'missing config',
    actions: [{ type: 'email' }],
    detail: [issue('missing', at(0, 'config'), 'Field required')],
  },
  {
    what: 'config not an object',
    actions: [{ type: 'email', config: 'ops@example.com' as unknown as Record<string, unknown> }],
    detail: [issue('dict_type', at(0, 'config'), 'Input should be a valid object')],
  },
  {
    what: 'extra field beside type and config',
    actions: [{ ...EMAIL, enabled: true } as Action],
    detail: [issue('extra_forbidden', at(0, 'enabled'), 'Extra inputs are not permitted')],
  },
  {
    what: 'email `to` not an email',
    actions: [with_(EMAIL, { to: ['ops@example.com', 'not-an-email'] })],
    detail: [issue('value_error', at(0, 'config', 'to', 1), 'Input should be a valid email')],
  },
  {
    what: 'email without recipients',
    actions: [with_(EMAIL, { to: [] })],
    detail: [issue('too_short', at(0, 'config', 'to'), 'List should have at least 1 items')],
  },
  {
    what: 'sms `to` not E.164',
    actions: [with_(SMS, { to: '0155 5550123' })],
    detail: [
      issue('value_error', at(0, 'config', 'to'), "String should match pattern '^\\+[1-9][0-9]{6,14}$'"),
    ],
  },
  {
    what: 'sms account sid',
    actions: [with_(SMS, { account_sid: 'SK0123' })],
    detail: [
      issue(
        'value_error',
        at(0, 'config', 'account_sid'),
        "String should match pattern '^AC[0-9a-fA-F]{32}$'",
      ),
    ],
  },
  {
    what: 'lambda region',
    actions: [EMAIL, with_(LAMBDA, { region: 'EU_WEST_1' })],
    detail: [
      issue(
        'value_error',
        at(1, 'config', 'region'),
        "String should match pattern '^[a-z]{2}(-[a-z]+)+-[0-9]+$'",
      ),
    ],
  },
  {
    what: 'sns topic not an ARN',
    actions: [with_(SNS, { topic_arn: 'events' })],
    detail: [
      issue(
        'value_error',
        at(0, 'config', 'topic_arn'),
        "String should match pattern '^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}(\\.fifo)?$'",
      ),
    ],
  },
  {
    what: 'database table injection attempt',
    actions: [with_(DATABASE, { table: 'x"; drop' })],
    detail: [
      issue(
        'value_error',
        at(0, 'config', 'table'),
        "String should match pattern '^[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?$'",
      ),
    ],
  },
  {
    what: 'database URL of another scheme',
    actions: [with_(DATABASE, { connection_url: 'mysql://writer:pw@db.example.com/ops' })],
    detail: [
      issue(
        'value_error',
        at(0, 'config', 'connection_url'),
        "String should match pattern '^postgres(ql)?://'",
      ),
    ],
  },
  {
    what: 'extra field in a config',
    actions: [with_(SLACK, { channel: '#ops' })],
    detail: [issue('extra_forbidden', at(0, 'config', 'channel'), 'Extra inputs are not permitted')],
  },
  {
    what: 'a field of another type',
    actions: [with_(EMAIL, { webhook_url: 'https://hooks.slack.com/x' })],
    detail: [issue('extra_forbidden', at(0, 'config', 'webhook_url'), 'Extra inputs are not permitted')],
  },
  {
    what: 'no actions',
    actions: [],
    detail: [issue('too_short', ['body', 'actions'], 'List should have at least 1 items')],
  },
  {
    what: '11 actions',
    actions: Array.from({ length: 11 }, () => EMAIL),
    detail: [issue('too_long', ['body', 'actions'], 'List should have at most 10 items')],
  },
  {
    what: 'empty event types',
    eventTypes: [],
    detail: [issue('too_short', ['body', 'trigger', 'event_types'], 'List should have at least 1 items')],
  },
  {
    what: 'unknown event type',
    eventTypes: ['enter', 'linger'],
    detail: [
      issue('enum', ['body', 'trigger', 'event_types', 1], 'Input should be "enter" or "exit" or "dwell"'),
    ],
  },
  {
    what: 'repeated event type',
    eventTypes: ['exit', 'exit'],
    detail: [issue('value_error', ['body', 'trigger', 'event_types'], 'List items should be unique')],
  },
  {
    what: 'a template that does not parse',
    actions: [EMAIL, with_(SLACK, { message: 'Hello {{#a}} unclosed' })],
    detail: [
      issue('value_error', at(1, 'config', 'message'), 'Invalid template: Unclosed section "a" at 21'),
    ],
  },
  {
    what: 'a partial',
    actions: [with_(EMAIL, { subject: 'ok {{device.name}}', body: 'Hi {{> x}}' })],
    detail: [
      issue(
        'value_error',
        at(0, 'config', 'body'),
        'Invalid template: partials ({{> name}}) are not supported',
      ),
    ],
  },
  {
    what: 'a chat URL of another scheme',
    actions: [with_(SLACK, { webhook_url: 'ftp://hooks.slack.com/services/T1/B2/abc' })],
    detail: [issue('value_error', at(0, 'config', 'webhook_url'), "URL scheme should be 'http' or 'https'")],
  },
  {
    what: 'a chat URL that is not a URL',
    actions: [{ type: 'discord', config: { webhook_url: 'discord webhook' } }],
    detail: [issue('value_error', at(0, 'config', 'webhook_url'), 'Input should be a valid URL')],
  },
  {
    what: 'a chat URL with credentials',
    actions: [{ type: 'teams', config: { webhook_url: 'https://user:pw@teams.example/hook' } }],
    detail: [
      issue(
        'value_error',
        at(0, 'config', 'webhook_url'),
        'URL may not contain credentials; send them in a custom header such as Authorization',
      ),
    ],
  },
  {
    what: 'a database URL naming no host',
    actions: [with_(DATABASE, { connection_url: 'postgres:///ops' })],
    detail: [
      issue(
        'value_error',
        at(0, 'config', 'connection_url'),
        'URL should name a host, as in postgres://user:password@host:5432/db',
      ),
    ],
  },
  {
    what: 'missing secrets on create',
    actions: [
      without(SLACK, 'webhook_url'),
      without(SMS, 'auth_token'),
      without(LAMBDA, 'secret_access_key'),
      without(SNS, 'secret_access_key'),
      without(DATABASE, 'connection_url'),
      { type: 'teams', config: { message: 'hi' } },
    ],
    detail: [
      issue('missing', at(0, 'config', 'webhook_url'), 'Field required'),
      issue('missing', at(1, 'config', 'auth_token'), 'Field required'),
      issue('missing', at(2, 'config', 'secret_access_key'), 'Field required'),
      issue('missing', at(3, 'config', 'secret_access_key'), 'Field required'),
      issue('missing', at(4, 'config', 'connection_url'), 'Field required'),
      issue('missing', at(5, 'config', 'webhook_url'), 'Field required'),
    ],
  },
  {
    what: 'template and secret issues of several actions together',
    actions: [
      EMAIL,
      { type: 'discord', config: { message: '{{/x}}' } },
      with_(without(SMS, 'auth_token'), { body: '{{> p}}' }),
    ],
    detail: [
      issue('value_error', at(1, 'config', 'message'), 'Invalid template: Unopened section "x" at 0'),
      issue('missing', at(1, 'config', 'webhook_url'), 'Field required'),
      issue(
        'value_error',
        at(2, 'config', 'body'),
        'Invalid template: partials ({{> name}}) are not supported',
      ),
      issue('missing', at(2, 'config', 'auth_token'), 'Field required'),
    ],
  },
];

/** Literal private targets of every type that has one, and the messages' first words. */
const PRIVATE_TARGETS: Array<[string, Action, RegExp]> = [
  [
    'slack loopback',
    with_(SLACK, { webhook_url: 'http://127.0.0.1/x' }),
    /^actions\[0\]\.config\.webhook_url host 127\.0\.0\.1 is a loopback address/,
  ],
  [
    'discord IPv6 loopback',
    { type: 'discord', config: { webhook_url: 'http://[::1]/' } },
    /host \[::1\] is a loopback address/,
  ],
  [
    'teams metadata',
    { type: 'teams', config: { webhook_url: 'http://169.254.169.254/' } },
    /host 169\.254\.169\.254 is a/,
  ],
  [
    'database private host',
    with_(DATABASE, { connection_url: 'postgres://writer:pw-0123456789@10.0.0.5:5432/ops' }),
    /^actions\[0\]\.config\.connection_url host 10\.0\.0\.5 is a private \(RFC 1918\) address/,
  ],
  [
    'sms API base',
    with_(SMS, { api_base_url: 'http://192.168.1.10:8080' }),
    /api_base_url host 192\.168\.1\.10 is a private \(RFC 1918\) address/,
  ],
  ['lambda endpoint', with_(LAMBDA, { endpoint: 'http://[fd00::1]:4566' }), /endpoint host \[fd00::1\] is a/],
  ['sns endpoint', with_(SNS, { endpoint: 'http://100.64.0.1/' }), /endpoint host 100\.64\.0\.1 is a/],
];

describe('workflow configuration: validation', () => {
  let t: TestApp;
  let jwt: { token: string };
  let geofenceId: string;
  let workflow: WorkflowOut;
  const body = (c: Pick<Case, 'actions' | 'eventTypes'>) => ({
    name: 'V',
    trigger: { geofence_id: geofenceId, event_types: c.eventTypes ?? ['enter'] },
    actions: c.actions ?? [EMAIL],
  });

  before(async () => {
    // WEBHOOK_ALLOW_PRIVATE_TARGETS not set: the service default (false) applies.
    t = await startIdentityApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: '' } });
    jwt = { token: (await signUp(t, 'workflows-validation')).tokens.access_token };
    geofenceId = (await createGeofence(t, jwt, { name: 'Depot', geometry: circle(13.4, 52.5, 300) })).id;
    workflow = expectStatus<WorkflowOut>(
      await call(t, '/workflows', { ...jwt, body: body({ actions: [EMAIL, EMAIL] }) }),
      201,
      'the workflow PATCHed below',
    );
  });
  after(async () => t?.close());

  for (const c of CASES) {
    test(`create: ${c.what}`, async () => {
      const res = await call(t, '/workflows', { ...jwt, body: body(c) });
      assert.deepEqual(issuesOf(res, c.what), c.detail);
    });
  }

  test('PATCH answers the same (the workflow’s actions are e-mails: no secret to inherit)', async () => {
    for (const c of CASES) {
      const res = await call(t, `/workflows/${workflow.id}`, { ...jwt, method: 'PATCH', body: body(c) });
      assert.deepEqual(issuesOf(res, `PATCH ${c.what}`), c.detail, `PATCH ${c.what}`);
    }
    assert.deepEqual(
      expectStatus(await call(t, `/workflows/${workflow.id}`, jwt), 200),
      workflow,
      'nothing of the refused PATCHes stuck',
    );
    const list = expectStatus<Page<WorkflowOut>>(await call(t, '/workflows', jwt), 200);
    assert.equal(list.pagination.total, 1, 'no refused create stored anything');
  });

  test('the record’s own fields', async () => {
    const cases: Array<[Record<string, unknown>, Issue[]]> = [
      [
        { name: '' },
        [issue('string_too_short', ['body', 'name'], 'String should have at least 1 characters')],
      ],
      [
        { description: 'd'.repeat(2001) },
        [issue('string_too_long', ['body', 'description'], 'String should have at most 2000 characters')],
      ],
      [{ enabled: 'yes' }, [issue('bool_parsing', ['body', 'enabled'], 'Input should be a valid boolean')]],
      [
        { trigger: { geofence_id: 'depot', event_types: ['enter'] } },
        [issue('value_error', ['body', 'trigger', 'geofence_id'], 'Input should be a valid uuid')],
      ],
      [
        { trigger: { geofence_id: geofenceId } },
        [issue('missing', ['body', 'trigger', 'event_types'], 'Field required')],
      ],
      [{ colour: 'red' }, [issue('extra_forbidden', ['body', 'colour'], 'Extra inputs are not permitted')]],
    ];
    for (const [change, detail] of cases) {
      const what = JSON.stringify(change);
      assert.deepEqual(
        issuesOf(await call(t, '/workflows', { ...jwt, body: { ...body({}), ...change } }), what),
        detail,
        what,
      );
      assert.deepEqual(
        issuesOf(
          await call(t, `/workflows/${workflow.id}`, { ...jwt, method: 'PATCH', body: change }),
          `PATCH ${what}`,
        ),
        detail,
        `PATCH ${what}`,
      );
    }
    const { trigger: _trigger, ...noTrigger } = body({});
    assert.deepEqual(issuesOf(await call(t, '/workflows', { ...jwt, body: noTrigger }), 'no trigger'), [
      issue('missing', ['body', 'trigger'], 'Field required'),
    ]);
  });

  test('a literal private target → 400 VALIDATION_ERROR naming the field, never the secret', async () => {
    for (const [what, action, message] of PRIVATE_TARGETS) {
      for (const [how, path, method] of [
        ['create', '/workflows', 'POST'],
        ['PATCH', `/workflows/${workflow.id}`, 'PATCH'],
      ] as const) {
        const res = await call(t, path, { ...jwt, method, body: body({ actions: [action] }) });
        const error = expectError(res, 400, 'VALIDATION_ERROR', `${how} ${what}`);
        assert.equal(typeof error.detail, 'string', `${how} ${what}`);
        assert.match(String(error.detail), message, `${how} ${what}`);
        assert.match(String(error.detail), /WEBHOOK_ALLOW_PRIVATE_TARGETS=true/);
        assert.ok(
          !res.body.includes('pw-0123456789') && !res.body.includes('secret-0123'),
          `${how} ${what}: no secret`,
        );
      }
    }
    // A public host, and a host name (resolved when the action runs), are accepted.
    for (const action of [
      with_(SLACK, { webhook_url: 'https://93.184.216.34/hook' }),
      with_(DATABASE, { connection_url: 'postgres://writer:pw-0123456789@localhost:5432/ops' }),
    ]) {
      expectStatus(await call(t, '/workflows', { ...jwt, body: body({ actions: [action] }) }), 201);
    }
  });

  test('… accepted when WEBHOOK_ALLOW_PRIVATE_TARGETS=true', async () => {
    const open = await startIdentityApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    try {
      const token = (await signUp(open, 'workflows-private')).tokens.access_token;
      const fence = await createGeofence(
        open,
        { token },
        { name: 'Depot', geometry: circle(13.4, 52.5, 300) },
      );
      const created = expectStatus<WorkflowOut>(
        await call(open, '/workflows', {
          token,
          body: {
            name: 'Local',
            trigger: { geofence_id: fence.id, event_types: ['enter'] },
            actions: PRIVATE_TARGETS.map(([, action]) => action),
          },
        }),
        201,
      );
      assert.deepEqual(
        created.actions.map((a) => a.type),
        PRIVATE_TARGETS.map(([, action]) => action.type),
      );
    } finally {
      await open.close();
    }
  });
});
