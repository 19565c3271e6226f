/**
 * Workflow configuration through HTTP (contract §6): the record and its defaults, one action of
 * every type with its secrets sealed at rest and answered masked, list, partial update (secrets
 * kept, kept when sent back masked, replaced), delete, workspace isolation, the checks of the
 * trigger geofence and of `webhook` actions, and scopes. Every response body of this file is
 * collected and searched for the secrets at the end. Validation errors:
 * workflows-validation.test.ts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../../src/shared/encryption.ts';
import { circle, createGeofence } from '../geofences/helpers.ts';
import { TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app.ts';
import {
  type CallOptions,
  call,
  createApiKey,
  expectError,
  expectStatus,
  type Page,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { issuesOf } from '../helpers/validation-issues.ts';
import type { WorkflowOut } from './workflow-helpers.ts';

const RECORD_FIELDS = [
  'actions',
  'created_at',
  'description',
  'enabled',
  'id',
  'name',
  'trigger',
  'updated_at',
  'version',
];

/** Every secret this file sends; none may come back in any answer or log line. */
const SECRET = {
  slackPath: 'services/T0SLACK01/B0SLACK02/sl4ckPathS3cretQwErTy',
  discordPath: 'api/webhooks/1122334455/d1sc0rdPathS3cretAsDfGh',
  teamsPath: 'webhookb2/t3amsPathS3cret-ZxCvBn/IncomingWebhook/9f8e7d',
  twilioToken: 'twilioAuthS3cret0123456789abcdef',
  lambdaKey: 'lambdaS3cretAccessKey/Ab+Cd0123456789',
  snsKey: 'snsS3cretAccessKey/Zy+Xw98765432100',
  dbPassword: 'dbPassw0rdS3cretUvWx',
  // The replacements sent by a PATCH.
  newSlackPath: 'services/T0SLACK01/B0SLACK02/n3wSlackS3cretPoIuYt',
  newTwilioToken: 'n3wTwilioAuthS3cret9876543210fedc',
  newDbPassword: 'n3wDbPassw0rdS3cretLkJh',
  shortToken: 'sh0rtTk',
};

const slackUrl = (path = SECRET.slackPath) => `https://hooks.slack.com/${path}`;
const dbUrl = (password = SECRET.dbPassword) => `postgres://warehouse:${password}@db.example.com:5432/ops`;

/** One action of each of the nine types, every optional field set. */
function nineActions(webhookId: string): Array<{ type: string; config: Record<string, unknown> }> {
  return [
    { type: 'webhook', config: { webhook_id: webhookId } },
    {
      type: 'slack',
      config: {
        webhook_url: slackUrl(),
        message: ':truck: {{device.name}} {{event_type}} {{geofence.name}}',
      },
    },
    {
      type: 'discord',
      config: { webhook_url: `https://discord.com/${SECRET.discordPath}`, message: '{{device.name}} here' },
    },
    {
      type: 'teams',
      config: {
        webhook_url: `https://contoso.webhook.office.com/${SECRET.teamsPath}`,
        message: '{{#test}}[test] {{/test}}{{geofence.name}}',
      },
    },
    {
      type: 'email',
      config: {
        to: ['ops@example.com', 'dispatch@example.org'],
        subject: '{{device.name}} {{event_type}}',
        body: 'At {{geofence.name}} ({{point.lat}}, {{point.lng}})',
      },
    },
    {
      type: 'sms',
      config: {
        to: '+14155550123',
        from: '+14155550100',
        account_sid: 'AC0123456789abcdef0123456789abcdef',
        auth_token: SECRET.twilioToken,
        body: '{{device.name}} is at {{geofence.name}}',
        api_base_url: 'https://api.twilio.com',
      },
    },
    {
      type: 'lambda',
      config: {
        function_name: 'arn:aws:lambda:eu-west-1:123456789012:function:geofence-handler',
        region: 'eu-west-1',
        access_key_id: 'AKIAIOSFODNN7EXAMPLE',
        secret_access_key: SECRET.lambdaKey,
        endpoint: 'https://lambda.eu-west-1.amazonaws.com',
      },
    },
    {
      type: 'sns',
      config: {
        topic_arn: 'arn:aws:sns:eu-west-1:123456789012:geofence-events',
        region: 'eu-west-1',
        access_key_id: 'AKIAI44QH8DHBEXAMPLE',
        secret_access_key: SECRET.snsKey,
        subject: '{{event}}',
        message: '{{payload_json}}',
      },
    },
    { type: 'database', config: { connection_url: dbUrl(), table: 'crm.geofence_events' } },
  ];
}

/** The same actions as answered: written out by hand from the masking rule of contract §6. */
function nineActionsMasked(webhookId: string) {
  const sent = nineActions(webhookId);
  const masked: Record<string, Record<string, unknown>> = {
    slack: { webhook_url: 'https://hooks.slack.com/…ErTy' },
    discord: { webhook_url: 'https://discord.com/…DfGh' },
    teams: { webhook_url: 'https://contoso.webhook.office.com/…8e7d' },
    sms: { auth_token: '…cdef' },
    lambda: { secret_access_key: '…6789' },
    sns: { secret_access_key: '…2100' },
    database: { connection_url: 'postgres://warehouse:…@db.example.com:5432/ops' },
  };
  return sent.map((a) => ({ type: a.type, config: { ...a.config, ...masked[a.type] } }));
}

/** The secret values each action holds, by field, as sent. */
const SECRET_FIELDS: Record<string, string> = {
  slack: 'webhook_url',
  discord: 'webhook_url',
  teams: 'webhook_url',
  sms: 'auth_token',
  lambda: 'secret_access_key',
  sns: 'secret_access_key',
  database: 'connection_url',
};

interface StoredActionRow {
  type: string;
  config: Record<string, unknown>;
  sealed: Record<string, string>;
}

describe('workflow configuration', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let jwt: { token: string };
  let geofenceId: string;
  let webhookId: string;
  /** Every response body of the file, searched for secrets at the end. */
  const bodies: string[] = [];
  const box = new SecretBox(TEST_ENCRYPTION_KEY);

  const send = async (path: string, options: CallOptions) => {
    const res = await call(t, path, options);
    bodies.push(res.body);
    return res;
  };
  const trigger = (events = ['enter', 'exit']) => ({ geofence_id: geofenceId, event_types: events });
  const create = async (body: Record<string, unknown>, credentials: CallOptions = jwt) =>
    expectStatus<WorkflowOut>(
      await send('/workflows', { ...credentials, body: { name: 'Flow', trigger: trigger(), ...body } }),
      201,
      'create workflow',
    );
  const patch = async (id: string, body: Record<string, unknown>) =>
    expectStatus<WorkflowOut>(
      await send(`/workflows/${id}`, { ...jwt, method: 'PATCH', body }),
      200,
      'patch workflow',
    );
  const get = async (id: string) =>
    expectStatus<WorkflowOut>(await send(`/workflows/${id}`, jwt), 200, 'get workflow');

  /** The `workflows.actions` column as stored, and each sealed secret opened with the test key. */
  async function storedActions(id: string): Promise<StoredActionRow[]> {
    const row = await t.deps.database.db
      .selectFrom('workflows')
      .select('actions')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    const text = typeof row.actions === 'string' ? row.actions : JSON.stringify(row.actions);
    for (const secret of Object.values(SECRET)) {
      assert.ok(!text.includes(secret), 'the actions column holds no secret in the clear');
    }
    return JSON.parse(text) as StoredActionRow[];
  }
  async function openedSecrets(id: string): Promise<Array<Record<string, string>>> {
    return (await storedActions(id)).map((a) =>
      Object.fromEntries(Object.entries(a.sealed).map(([field, sealed]) => [field, box.open(sealed)])),
    );
  }

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'workflows');
    jwt = { token: owner.tokens.access_token };
    geofenceId = (await createGeofence(t, jwt, { name: 'Depot', geometry: circle(13.4, 52.5, 300) })).id;
    webhookId = expectStatus<{ id: string }>(
      await send('/webhooks', { ...jwt, body: { name: 'Receiver', url: 'https://receiver.example/hook' } }),
      201,
    ).id;
  });
  after(async () => t?.close());

  test('create → 201 with the record’s exact fields and defaults; GET answers the same', async () => {
    const created = await create({
      name: 'Arrivals',
      trigger: trigger(['enter']),
      actions: [{ type: 'email', config: { to: ['ops@example.com'] } }],
    });
    assert.deepEqual(Object.keys(created).sort(), RECORD_FIELDS);
    assert.match(created.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const now = t.clock.now().toISOString();
    assert.deepEqual(created, {
      id: created.id,
      name: 'Arrivals',
      description: null,
      trigger: { geofence_id: geofenceId, event_types: ['enter'] },
      actions: [{ type: 'email', config: { to: ['ops@example.com'] } }],
      enabled: true,
      created_at: now,
      updated_at: now,
      version: 1,
    });
    assert.deepEqual(await get(created.id), created);

    const explicit = await create({
      name: 'Departures',
      description: 'Tell dispatch',
      enabled: false,
      trigger: trigger(['exit', 'enter']),
      actions: [{ type: 'webhook', config: { webhook_id: webhookId } }],
    });
    assert.equal(explicit.description, 'Tell dispatch');
    assert.equal(explicit.enabled, false);
    assert.deepEqual(explicit.trigger.event_types, ['exit', 'enter']);
  });

  test('one action of each of the nine types round-trips, secrets sealed at rest and answered masked', async () => {
    const created = await create({ name: 'Everything', actions: nineActions(webhookId) });
    assert.deepEqual(created.actions, nineActionsMasked(webhookId));
    assert.deepEqual((await get(created.id)).actions, created.actions);

    const stored = await storedActions(created.id);
    assert.deepEqual(
      stored.map((a) => ({ type: a.type, config: a.config })),
      created.actions,
      'the column keeps the masks for answers',
    );
    const sent = nineActions(webhookId);
    assert.deepEqual(
      await openedSecrets(created.id),
      sent.map((a) => {
        const field = SECRET_FIELDS[a.type];
        return field ? { [field]: String(a.config[field]) } : {};
      }),
      'each sealed secret opens to the value sent',
    );
    assert.throws(
      () =>
        new SecretBox('another-encryption-key-0123456789abcdef').open(stored[1]?.sealed.webhook_url ?? ''),
      'sealed under the service key',
    );
  });

  test('short secrets show fewer characters; a chat URL with a short path shows none', async () => {
    const created = await create({
      actions: [
        { type: 'slack', config: { webhook_url: 'https://chat.example/abc' } },
        { type: 'sms', config: { ...nineActions(webhookId)[5]?.config, auth_token: SECRET.shortToken } },
        { type: 'sns', config: { ...nineActions(webhookId)[7]?.config, secret_access_key: 'k3y12345678' } },
        {
          type: 'database',
          config: { connection_url: 'postgres://reader@db.example.com/ops', table: 'events' },
        },
      ],
    });
    assert.deepEqual(
      created.actions.map((a) => Object.values(a.config).find((v) => String(v).includes('…')) ?? null),
      ['https://chat.example/…', '…', '…78', null],
    );
    // A connection URL without a password has nothing to mask, but is still sealed.
    assert.equal(created.actions[3]?.config.connection_url, 'postgres://reader@db.example.com/ops');
    const opened = await openedSecrets(created.id);
    assert.deepEqual(opened[1], { auth_token: SECRET.shortToken });
    assert.deepEqual(opened[3], { connection_url: 'postgres://reader@db.example.com/ops' });
  });

  test('list: envelope, newest first, the enabled and geofence_id filters, pagination', async () => {
    const other = await signUp(t, 'workflows-list');
    const token = { token: other.tokens.access_token };
    const fenceA = await createGeofence(t, token, { name: 'A', geometry: circle(5, 45, 100) });
    const fenceB = await createGeofence(t, token, { name: 'B', geometry: circle(6, 45, 100) });
    const action = [{ type: 'email', config: { to: ['list@example.com'] } }];
    const made: WorkflowOut[] = [];
    for (const [i, fence, enabled] of [
      [0, fenceA, true],
      [1, fenceB, false],
      [2, fenceA, false],
      [3, fenceB, true],
    ] as const) {
      made.push(
        await create(
          {
            name: `L${i}`,
            enabled,
            trigger: { geofence_id: fence.id, event_types: ['enter'] },
            actions: action,
          },
          token,
        ),
      );
      // L3 is created in the same millisecond as L2: the id orders them.
      if (i < 2) t.clock.advance(1000);
    }
    const list = async (query: Record<string, string> = {}) =>
      expectStatus<Page<WorkflowOut>>(await send('/workflows', { ...token, query }), 200, 'list');
    const all = await list();
    assert.deepEqual(
      all.results.map((w) => w.name),
      ['L3', 'L2', 'L1', 'L0'],
    );
    assert.deepEqual(all.pagination, { total: 4, limit: 50, offset: 0, has_more: false });
    assert.deepEqual(all.results[3], made[0], 'list items are the full record');

    assert.deepEqual(
      (await list({ enabled: 'true' })).results.map((w) => w.name),
      ['L3', 'L0'],
    );
    assert.deepEqual(
      (await list({ enabled: 'false' })).results.map((w) => w.name),
      ['L2', 'L1'],
    );
    assert.deepEqual(
      (await list({ geofence_id: fenceB.id })).results.map((w) => w.name),
      ['L3', 'L1'],
    );
    const both = await list({ geofence_id: fenceA.id, enabled: 'false' });
    assert.deepEqual(
      both.results.map((w) => w.name),
      ['L2'],
    );
    assert.equal(both.pagination.total, 1);
    assert.equal((await list({ geofence_id: randomUUID() })).pagination.total, 0);
    assert.equal((await list({ geofence_id: 'not-an-id' })).pagination.total, 0);

    const second = await list({ limit: '2', offset: '1' });
    assert.deepEqual(
      second.results.map((w) => w.name),
      ['L2', 'L1'],
    );
    assert.deepEqual(second.pagination, { total: 4, limit: 2, offset: 1, has_more: true });
    const last = await list({ limit: '2', offset: '2' });
    assert.deepEqual(last.pagination, { total: 4, limit: 2, offset: 2, has_more: false });
    issuesOf(await send('/workflows', { ...token, query: { limit: '0' } }), 'limit 0');
    issuesOf(await send('/workflows', { ...token, query: { enabled: 'maybe' } }), 'enabled maybe');
  });

  test('PATCH changes only the given fields; actions are replaced whole', async () => {
    const otherFence = await createGeofence(t, jwt, { name: 'Yard', geometry: circle(13.5, 52.5, 300) });
    const created = await create({
      name: 'Patch me',
      description: 'before',
      actions: nineActions(webhookId),
    });
    t.clock.advance(5000);
    const renamed = await patch(created.id, { name: 'Patched' });
    assert.deepEqual(renamed, {
      ...created,
      name: 'Patched',
      updated_at: t.clock.now().toISOString(),
      version: 2,
    });

    t.clock.advance(1000);
    const moved = await patch(created.id, {
      description: null,
      enabled: false,
      trigger: { geofence_id: otherFence.id, event_types: ['exit'] },
    });
    assert.deepEqual(moved, {
      ...renamed,
      description: null,
      enabled: false,
      trigger: { geofence_id: otherFence.id, event_types: ['exit'] },
      updated_at: t.clock.now().toISOString(),
      version: 3,
    });
    assert.deepEqual(await get(created.id), moved);

    const replaced = await patch(created.id, {
      actions: [{ type: 'email', config: { to: ['only@example.com'] } }],
    });
    assert.deepEqual(replaced.actions, [{ type: 'email', config: { to: ['only@example.com'] } }]);
    assert.deepEqual(await storedActions(created.id), [
      { type: 'email', config: { to: ['only@example.com'] }, sealed: {} },
    ]);
    // An empty PATCH changes nothing but updated_at and the version.
    const same = await patch(created.id, {});
    assert.deepEqual({ ...same, updated_at: replaced.updated_at, version: replaced.version }, replaced);
    assert.equal(same.version, replaced.version + 1);
  });

  describe('secrets on PATCH', () => {
    const originals = () =>
      nineActions(webhookId).map((a) => {
        const field = SECRET_FIELDS[a.type];
        return field ? { [field]: String(a.config[field]) } : {};
      });

    test('left out → kept', async () => {
      const created = await create({ actions: nineActions(webhookId) });
      const withoutSecrets = nineActions(webhookId).map((a) => {
        const config: Record<string, unknown> = { ...a.config };
        const field = SECRET_FIELDS[a.type];
        if (field) delete config[field];
        return { type: a.type, config };
      });
      const patched = await patch(created.id, { actions: withoutSecrets });
      assert.deepEqual(patched.actions, created.actions);
      assert.deepEqual(await openedSecrets(created.id), originals());
    });

    test('sent back masked, as answered → kept', async () => {
      const created = await create({ actions: nineActions(webhookId) });
      const patched = await patch(created.id, { actions: created.actions });
      assert.deepEqual(patched.actions, created.actions);
      assert.deepEqual(await openedSecrets(created.id), originals());
      // A non-secret field changed beside a masked secret: the secret stays, the field changes.
      const edited = created.actions.map((a) =>
        a.type === 'slack' ? { type: a.type, config: { ...a.config, message: 'changed' } } : a,
      );
      const again = await patch(created.id, { actions: edited });
      assert.equal(again.actions[1]?.config.message, 'changed');
      assert.deepEqual(await openedSecrets(created.id), originals());
    });

    test('a new value → replaced', async () => {
      const created = await create({ actions: nineActions(webhookId) });
      const fresh: Record<string, Record<string, string>> = {
        slack: { webhook_url: slackUrl(SECRET.newSlackPath) },
        sms: { auth_token: SECRET.newTwilioToken },
        database: { connection_url: dbUrl(SECRET.newDbPassword) },
      };
      const changed = created.actions.map((a) => ({
        type: a.type,
        config: { ...a.config, ...fresh[a.type] },
      }));
      const patched = await patch(created.id, { actions: changed });
      assert.equal(patched.actions[1]?.config.webhook_url, 'https://hooks.slack.com/…IuYt');
      assert.equal(patched.actions[5]?.config.auth_token, '…fedc');
      assert.equal(
        patched.actions[8]?.config.connection_url,
        'postgres://warehouse:…@db.example.com:5432/ops',
      );
      const expected = originals();
      expected[1] = fresh.slack ?? {};
      expected[5] = fresh.sms ?? {};
      expected[8] = fresh.database ?? {};
      assert.deepEqual(await openedSecrets(created.id), expected);
      // The other secrets did not move.
      assert.deepEqual(
        patched.actions.filter((_a, i) => ![1, 5, 8].includes(i)),
        created.actions.filter((_a, i) => ![1, 5, 8].includes(i)),
      );
    });

    test('a position whose type changed keeps nothing: its secret is required again', async () => {
      const created = await create({ actions: nineActions(webhookId) });
      // Position 1 was slack, 4 was email: neither can inherit a secret.
      const actions: Array<{ type: string; config: Record<string, unknown> }> = created.actions.map((a) => ({
        type: a.type,
        config: { ...a.config },
      }));
      actions[1] = { type: 'discord', config: {} };
      const smsConfig = { ...nineActions(webhookId)[5]?.config } as Record<string, unknown>;
      delete smsConfig.auth_token;
      actions[4] = { type: 'sms', config: smsConfig };
      const res = await send(`/workflows/${created.id}`, { ...jwt, method: 'PATCH', body: { actions } });
      assert.deepEqual(issuesOf(res, 'type changed'), [
        { type: 'missing', loc: ['body', 'actions', 1, 'config', 'webhook_url'], msg: 'Field required' },
        { type: 'missing', loc: ['body', 'actions', 4, 'config', 'auth_token'], msg: 'Field required' },
      ]);
      // Moving an action to another position loses its secret too.
      const shifted = [
        { type: 'webhook', config: { webhook_id: webhookId } },
        { type: 'email', config: { to: ['a@example.com'] } },
        { type: 'slack', config: {} },
      ];
      assert.deepEqual(
        issuesOf(
          await send(`/workflows/${created.id}`, { ...jwt, method: 'PATCH', body: { actions: shifted } }),
          'shifted',
        ),
        [{ type: 'missing', loc: ['body', 'actions', 2, 'config', 'webhook_url'], msg: 'Field required' }],
      );
      assert.deepEqual(await get(created.id), created, 'nothing of the refused PATCHes stuck');
      assert.deepEqual(await openedSecrets(created.id), originals());
    });
  });

  test('DELETE → 204, then 404 on every route of the workflow', async () => {
    const created = await create({ actions: [{ type: 'webhook', config: { webhook_id: webhookId } }] });
    const res = await send(`/workflows/${created.id}`, { ...jwt, method: 'DELETE' });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    for (const [path, method, body] of [
      [`/workflows/${created.id}`, 'GET', undefined],
      [`/workflows/${created.id}`, 'PATCH', { name: 'x' }],
      [`/workflows/${created.id}`, 'DELETE', undefined],
      [`/workflows/${created.id}/runs`, 'GET', undefined],
      [`/workflows/${created.id}/test`, 'POST', undefined],
    ] as const) {
      const answer = await send(path, { ...jwt, method, ...(body ? { body } : {}) });
      assert.deepEqual(expectError(answer, 404, 'NOT_FOUND', `${method} ${path}`), {
        detail: 'Workflow not found',
        error_code: 'NOT_FOUND',
      });
    }
    const list = expectStatus<Page<WorkflowOut>>(await send('/workflows', jwt), 200);
    assert.ok(!list.results.some((w) => w.id === created.id));
  });

  test('another workspace’s workflow: 404 on every route, absent from its list, untouched', async () => {
    const created = await create({ name: 'Private', actions: nineActions(webhookId) });
    const stranger = await signUp(t, 'workflows-stranger');
    const key = (await createApiKey(t, stranger.tokens.access_token, ['workflows:write'])).key;
    for (const credentials of [{ token: stranger.tokens.access_token }, { apiKey: key }]) {
      for (const [path, method, body] of [
        [`/workflows/${created.id}`, 'GET', undefined],
        [`/workflows/${created.id}`, 'PATCH', { name: 'mine now' }],
        [`/workflows/${created.id}`, 'DELETE', undefined],
        [`/workflows/${created.id}/runs`, 'GET', undefined],
        [`/workflows/${created.id}/test`, 'POST', undefined],
      ] as const) {
        const res = await send(path, { ...credentials, method, ...(body ? { body } : {}) });
        assert.equal(expectError(res, 404, 'NOT_FOUND', `${method} ${path}`).detail, 'Workflow not found');
      }
      const list = expectStatus<Page<WorkflowOut>>(await send('/workflows', credentials), 200);
      assert.deepEqual(list.results, []);
    }
    assert.deepEqual(await get(created.id), created);
  });

  test('a trigger geofence of another workspace, or absent → 404 "Geofence not found"', async () => {
    const stranger = await signUp(t, 'workflows-fence');
    const theirs = await createGeofence(
      t,
      { token: stranger.tokens.access_token },
      { name: 'Theirs', geometry: circle(1, 1, 100) },
    );
    const created = await create({ actions: [{ type: 'email', config: { to: ['a@example.com'] } }] });
    for (const fence of [theirs.id, randomUUID()]) {
      const body = {
        name: 'Elsewhere',
        trigger: { geofence_id: fence, event_types: ['enter'] },
        actions: [{ type: 'email', config: { to: ['a@example.com'] } }],
      };
      for (const res of [
        await send('/workflows', { ...jwt, body }),
        await send(`/workflows/${created.id}`, { ...jwt, method: 'PATCH', body: { trigger: body.trigger } }),
      ]) {
        assert.equal(res.statusCode, 404, res.body);
        assert.deepEqual(res.json(), { detail: 'Geofence not found', error_code: 'NOT_FOUND' });
      }
    }
    assert.deepEqual(await get(created.id), created);
  });

  test('a webhook action naming a webhook of another workspace, or none → 422 at its webhook_id', async () => {
    const stranger = await signUp(t, 'workflows-hook');
    const theirs = expectStatus<{ id: string }>(
      await send('/webhooks', {
        token: stranger.tokens.access_token,
        body: { name: 'Theirs', url: 'https://theirs.example/' },
      }),
      201,
    );
    const actions = [
      { type: 'webhook', config: { webhook_id: webhookId } },
      { type: 'webhook', config: { webhook_id: theirs.id } },
      { type: 'email', config: { to: ['a@example.com'] } },
      { type: 'webhook', config: { webhook_id: randomUUID() } },
    ];
    const expected = [1, 3].map((i) => ({
      type: 'value_error',
      loc: ['body', 'actions', i, 'config', 'webhook_id'],
      msg: 'No webhook with this id in the workspace',
    }));
    assert.deepEqual(
      issuesOf(
        await send('/workflows', { ...jwt, body: { name: 'W', trigger: trigger(), actions } }),
        'create',
      ),
      expected,
    );
    const created = await create({ actions: [{ type: 'webhook', config: { webhook_id: webhookId } }] });
    assert.deepEqual(
      issuesOf(
        await send(`/workflows/${created.id}`, { ...jwt, method: 'PATCH', body: { actions } }),
        'patch',
      ),
      expected,
    );
    assert.deepEqual(await get(created.id), created);
  });

  test('scopes: workflows:read reads, workflows:write changes, neither → 403 everywhere', async () => {
    const created = await create({ name: 'Scoped', actions: nineActions(webhookId) });
    const readKey = (await createApiKey(t, owner.tokens.access_token, ['workflows:read'])).key;
    const writeKey = (await createApiKey(t, owner.tokens.access_token, ['workflows:write'])).key;
    const otherKey = (
      await createApiKey(t, owner.tokens.access_token, ['geofences:write', 'webhooks:write', 'events:read'])
    ).key;
    const body = {
      name: 'By key',
      trigger: trigger(),
      actions: [{ type: 'email', config: { to: ['k@example.com'] } }],
    };
    const reads: Array<[string, 'GET']> = [
      ['/workflows', 'GET'],
      [`/workflows/${created.id}`, 'GET'],
      [`/workflows/${created.id}/runs`, 'GET'],
    ];
    const writes: Array<[string, 'POST' | 'PATCH' | 'DELETE', unknown]> = [
      ['/workflows', 'POST', body],
      [`/workflows/${created.id}`, 'PATCH', { name: 'x' }],
      [`/workflows/${created.id}/test`, 'POST', undefined],
      [`/workflows/${created.id}`, 'DELETE', undefined],
    ];
    for (const [path, method] of reads) {
      expectStatus(await send(path, { apiKey: readKey, method }), 200, `read key ${method} ${path}`);
      const denied = expectError(
        await send(path, { apiKey: otherKey, method }),
        403,
        'INSUFFICIENT_PERMISSIONS',
        `other key ${method} ${path}`,
      );
      assert.match(String(denied.detail), /requires scope workflows:read/);
    }
    for (const [path, method, payload] of writes) {
      for (const key of [readKey, otherKey]) {
        const res = await send(path, { apiKey: key, method, ...(payload ? { body: payload } : {}) });
        const error = expectError(res, 403, 'INSUFFICIENT_PERMISSIONS', `${method} ${path}`);
        assert.match(String(error.detail), /requires scope workflows:write/);
      }
    }
    assert.deepEqual(await get(created.id), created, 'the refused writes changed nothing');

    // write implies read; the write key does everything.
    for (const [path, method] of reads) expectStatus(await send(path, { apiKey: writeKey, method }), 200);
    const made = await create(body, { apiKey: writeKey });
    expectStatus(
      await send(`/workflows/${made.id}`, { apiKey: writeKey, method: 'PATCH', body: { name: 'y' } }),
      200,
    );
    expectStatus(await send(`/workflows/${made.id}/test`, { apiKey: writeKey, method: 'POST' }), 202);
    assert.equal(
      (await send(`/workflows/${made.id}`, { apiKey: writeKey, method: 'DELETE' })).statusCode,
      204,
    );
    expectError(await send('/workflows', {}), 401, undefined);
  });

  test('no answer of this file and no log line holds a secret', () => {
    assert.ok(bodies.length > 50, `collected ${bodies.length} bodies`);
    const logs = t.logs.map((line) => JSON.stringify(line));
    for (const secret of Object.values(SECRET)) {
      for (const [what, texts] of [
        ['answer', bodies],
        ['log line', logs],
      ] as const) {
        const leak = texts.find((text) => text.includes(secret));
        assert.equal(leak, undefined, `a ${what} holds a secret`);
      }
    }
  });
});
