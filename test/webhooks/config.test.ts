/**
 * Webhook configuration through HTTP (contract §5): the record and its defaults, list, partial
 * update, delete, the signing secret (sealed at rest, revealed, rotated), private targets, workspace
 * isolation and scopes. Every validation error shape: config-validation.test.ts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../../src/shared/encryption.ts';
import { signBody, verifySignature } from '../../src/webhooks/signature.ts';
import { loadWebhookWithSecret } from '../../src/webhooks/webhooks.service.ts';
import { createGeofence, rect } from '../geofences/helpers.ts';
import type { TestApp } from '../helpers/app.ts';
import {
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

interface WebhookOut {
  id: string;
  name: string;
  url: string;
  method: string;
  content_type: string;
  timeout_seconds: number;
  headers: Record<string, string>;
  rate_limit_per_minute: number;
  events: string[];
  geofence_ids: string[] | null;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}
type CreatedWebhook = WebhookOut & { secret: string };
const RECORD_FIELDS = [
  'content_type',
  'created_at',
  'enabled',
  'events',
  'geofence_ids',
  'headers',
  'id',
  'method',
  'name',
  'rate_limit_per_minute',
  'timeout_seconds',
  'updated_at',
  'url',
];

describe('webhook configuration', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let jwt: { token: string };
  const create = async (
    body: Record<string, unknown>,
    credentials: { token?: string; apiKey?: string } = jwt,
  ) =>
    expectStatus<CreatedWebhook>(await call(t, '/webhooks', { ...credentials, body }), 201, 'create webhook');

  before(async () => {
    // The business plan allows 500 webhooks; the free plan's 5 is tested on its own below.
    t = await startIdentityApp({ env: { DEFAULT_PLAN: 'business' } });
    owner = await signUp(t, 'webhooks');
    jwt = { token: owner.tokens.access_token };
  });
  after(async () => t?.close());

  test('create → 201 with defaults and a whsec_ secret; GET shows the record without it', async () => {
    const created = await create({ name: 'Ops', url: 'https://hooks.example.com/geofence' });
    assert.deepEqual(Object.keys(created).sort(), [...RECORD_FIELDS, 'secret'].sort());
    assert.match(created.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.match(created.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const now = t.clock.now().toISOString();
    assert.deepEqual(
      { ...created, id: undefined, secret: undefined },
      {
        id: undefined,
        secret: undefined,
        name: 'Ops',
        url: 'https://hooks.example.com/geofence',
        method: 'POST',
        content_type: 'application/json',
        timeout_seconds: 30,
        headers: {},
        rate_limit_per_minute: 60,
        events: ['geofence.enter', 'geofence.exit'],
        geofence_ids: null,
        enabled: true,
        created_at: now,
        updated_at: now,
      },
    );
    const fetched = expectStatus<WebhookOut>(await call(t, `/webhooks/${created.id}`, jwt), 200);
    assert.deepEqual(Object.keys(fetched).sort(), RECORD_FIELDS);
    const { secret: _secret, ...withoutSecret } = created;
    assert.deepEqual(fetched, withoutSecret);
  });

  test('create with every field set keeps them all', async () => {
    const fence = await createGeofence(t, jwt, {
      name: 'Depot',
      geometry: { type: 'Polygon', coordinates: [rect(0, 0, 1, 1)] },
    });
    const created = await create({
      name: 'Everything',
      url: 'http://receiver.example.org:8443/in?x=1',
      method: 'PUT',
      content_type: 'application/vnd.acme+json; charset=utf-8',
      timeout_seconds: 60,
      headers: { Authorization: 'Bearer abc', 'X-Team': 'ops' },
      rate_limit_per_minute: 10000,
      events: ['geofence.exit'],
      geofence_ids: [fence.id],
      enabled: false,
    });
    assert.deepEqual(
      { ...created, id: undefined, secret: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        secret: undefined,
        created_at: undefined,
        updated_at: undefined,
        name: 'Everything',
        url: 'http://receiver.example.org:8443/in?x=1',
        method: 'PUT',
        content_type: 'application/vnd.acme+json; charset=utf-8',
        timeout_seconds: 60,
        headers: { Authorization: 'Bearer abc', 'X-Team': 'ops' },
        rate_limit_per_minute: 10000,
        events: ['geofence.exit'],
        geofence_ids: [fence.id],
        enabled: false,
      },
    );
    for (const method of ['POST', 'PATCH', 'GET']) {
      assert.equal((await create({ name: method, url: 'https://a.example/', method })).method, method);
    }
  });

  test('list: envelope, newest first, pagination and the enabled filter', async () => {
    const other = await signUp(t, 'webhooks-list');
    const token = { token: other.tokens.access_token };
    const made: CreatedWebhook[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(await create({ name: `L${i}`, url: `https://l${i}.example/`, enabled: i !== 1 }, token));
      t.clock.advance(1000);
    }
    const all = expectStatus<Page<WebhookOut>>(await call(t, '/webhooks', token), 200);
    assert.deepEqual(
      all.results.map((w) => w.name),
      ['L2', 'L1', 'L0'],
    );
    assert.deepEqual(all.pagination, { total: 3, limit: 50, offset: 0, has_more: false });
    assert.ok(all.results.every((w) => !('secret' in w)));
    const second = expectStatus<Page<WebhookOut>>(
      await call(t, '/webhooks', { ...token, query: { limit: '1', offset: '1' } }),
      200,
    );
    assert.deepEqual(
      second.results.map((w) => w.id),
      [made[1]?.id],
    );
    assert.deepEqual(second.pagination, { total: 3, limit: 1, offset: 1, has_more: true });
    const enabled = expectStatus<Page<WebhookOut>>(
      await call(t, '/webhooks', { ...token, query: { enabled: 'true' } }),
      200,
    );
    assert.deepEqual(
      enabled.results.map((w) => w.name),
      ['L2', 'L0'],
    );
    issuesOf(await call(t, '/webhooks', { ...token, query: { limit: '0' } }), 'limit 0');
  });

  test('PATCH changes only the given fields; null clears geofence_ids; headers are replaced whole', async () => {
    const fence = await createGeofence(t, jwt, {
      name: 'Yard',
      geometry: { type: 'Polygon', coordinates: [rect(2, 2, 3, 3)] },
    });
    const created = await create({
      name: 'Patch me',
      url: 'https://p.example/',
      headers: { 'X-A': '1', 'X-B': '2' },
      geofence_ids: [fence.id],
    });
    t.clock.advance(5000);
    const patched = expectStatus<WebhookOut>(
      await call(t, `/webhooks/${created.id}`, {
        ...jwt,
        method: 'PATCH',
        body: { timeout_seconds: 5, headers: { 'X-C': '3' }, enabled: false },
      }),
      200,
    );
    assert.equal(patched.timeout_seconds, 5);
    assert.deepEqual(patched.headers, { 'X-C': '3' });
    assert.equal(patched.enabled, false);
    assert.equal(patched.name, 'Patch me');
    assert.deepEqual(patched.geofence_ids, [fence.id]);
    assert.deepEqual(patched.events, ['geofence.enter', 'geofence.exit']);
    assert.equal(patched.created_at, created.created_at);
    assert.equal(patched.updated_at, t.clock.now().toISOString());
    const cleared = expectStatus<WebhookOut>(
      await call(t, `/webhooks/${created.id}`, { ...jwt, method: 'PATCH', body: { geofence_ids: null } }),
      200,
    );
    assert.equal(cleared.geofence_ids, null);
    assert.deepEqual(expectStatus(await call(t, `/webhooks/${created.id}`, jwt), 200), cleared);
    // An empty PATCH is a no-op that still answers the record.
    const same = expectStatus<WebhookOut>(
      await call(t, `/webhooks/${created.id}`, { ...jwt, method: 'PATCH', body: {} }),
      200,
    );
    assert.equal(same.timeout_seconds, 5);
  });

  test('DELETE → 204, then 404 everywhere', async () => {
    const created = await create({ name: 'Bye', url: 'https://bye.example/' });
    const res = await call(t, `/webhooks/${created.id}`, { ...jwt, method: 'DELETE' });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    for (const [path, method] of [
      [`/webhooks/${created.id}`, 'GET'],
      [`/webhooks/${created.id}`, 'DELETE'],
      [`/webhooks/${created.id}/secret`, 'GET'],
      [`/webhooks/${created.id}/rotate-secret`, 'POST'],
    ] as const) {
      const body = expectError(
        await call(t, path, { ...jwt, method }),
        404,
        'NOT_FOUND',
        `${method} ${path}`,
      );
      assert.equal(body.detail, 'Webhook not found');
    }
    expectError(
      await call(t, `/webhooks/${created.id}`, { ...jwt, method: 'PATCH', body: { name: 'x' } }),
      404,
      'NOT_FOUND',
    );
  });

  describe('the signing secret', () => {
    test('GET /secret reveals it; rotation replaces it and the old one stops verifying', async () => {
      const created = await create({ name: 'Secretive', url: 'https://s.example/' });
      const revealed = expectStatus<{ secret: string }>(
        await call(t, `/webhooks/${created.id}/secret`, jwt),
        200,
      );
      assert.deepEqual(revealed, { secret: created.secret });

      const rotated = expectStatus<{ secret: string }>(
        await call(t, `/webhooks/${created.id}/rotate-secret`, { ...jwt, method: 'POST' }),
        200,
      );
      assert.deepEqual(Object.keys(rotated), ['secret']);
      assert.match(rotated.secret, /^whsec_/);
      assert.notEqual(rotated.secret, created.secret);
      assert.deepEqual(expectStatus(await call(t, `/webhooks/${created.id}/secret`, jwt), 200), rotated);

      // What the delivery engine signs with now: verifies with the new secret only.
      const loaded = await loadWebhookWithSecret(
        t.deps.database.db,
        t.deps.secretBox,
        owner.workspace.id,
        created.id,
      );
      assert.equal(loaded?.secret, rotated.secret);
      const body = '{"event":"webhook.test"}';
      const signature = signBody(body, loaded?.secret ?? '');
      assert.equal(verifySignature(body, signature, rotated.secret), true);
      assert.equal(verifySignature(body, signature, created.secret), false);
      // The record itself is unchanged apart from updated_at.
      const record = expectStatus<WebhookOut>(await call(t, `/webhooks/${created.id}`, jwt), 200);
      assert.equal(record.url, created.url);
    });

    test('the stored column is sealed, not the plain secret', async () => {
      const created = await create({ name: 'Sealed', url: 'https://sealed.example/' });
      const row = await t.deps.database.db
        .selectFrom('webhooks')
        .selectAll()
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      const stored = Object.values(row).map((v) => String(v));
      assert.ok(
        stored.every((v) => !v.includes(created.secret.slice(6))),
        'no column holds the secret',
      );
      assert.match(row.secret_sealed, /^v1\./);
      assert.equal(t.deps.secretBox.open(row.secret_sealed), created.secret);
      assert.throws(() => new SecretBox('another-encryption-key-0123456789abcdef').open(row.secret_sealed));
    });

    test('loadWebhookWithSecret: undefined for another workspace or an unknown id', async () => {
      const created = await create({ name: 'Load', url: 'https://load.example/' });
      const { db } = t.deps.database;
      assert.equal(await loadWebhookWithSecret(db, t.deps.secretBox, randomUUID(), created.id), undefined);
      assert.equal(
        await loadWebhookWithSecret(db, t.deps.secretBox, owner.workspace.id, randomUUID()),
        undefined,
      );
      const loaded = await loadWebhookWithSecret(db, t.deps.secretBox, owner.workspace.id, created.id);
      assert.equal(loaded?.secret, created.secret);
      assert.equal(loaded?.url, created.url);
      assert.deepEqual(loaded?.events, ['geofence.enter', 'geofence.exit']);
    });
  });

  test('another workspace: 404 on every route, absent from its list', async () => {
    const created = await create({ name: 'Private', url: 'https://private.example/' });
    const stranger = await signUp(t, 'webhooks-stranger');
    const token = { token: stranger.tokens.access_token };
    const key = (await createApiKey(t, stranger.tokens.access_token, ['webhooks:write'])).key;
    for (const credentials of [token, { apiKey: key }]) {
      for (const [path, method, body] of [
        [`/webhooks/${created.id}`, 'GET', undefined],
        [`/webhooks/${created.id}`, 'PATCH', { name: 'mine now' }],
        [`/webhooks/${created.id}`, 'DELETE', undefined],
        [`/webhooks/${created.id}/secret`, 'GET', undefined],
        [`/webhooks/${created.id}/rotate-secret`, 'POST', undefined],
      ] as const) {
        const res = await call(t, path, { ...credentials, method, ...(body ? { body } : {}) });
        assert.equal(expectError(res, 404, 'NOT_FOUND', `${method} ${path}`).detail, 'Webhook not found');
      }
      const list = expectStatus<Page<WebhookOut>>(await call(t, '/webhooks', credentials), 200);
      assert.ok(!list.results.some((w) => w.id === created.id));
    }
    // Untouched.
    const mine = expectStatus<WebhookOut>(await call(t, `/webhooks/${created.id}`, jwt), 200);
    assert.equal(mine.name, 'Private');
    assert.deepEqual(expectStatus(await call(t, `/webhooks/${created.id}/secret`, jwt), 200), {
      secret: created.secret,
    });
  });

  test('scopes: webhooks:read reads, webhooks:write is needed to change or see the secret', async () => {
    const created = await create({ name: 'Scoped', url: 'https://scoped.example/' });
    const readKey = (await createApiKey(t, owner.tokens.access_token, ['webhooks:read'])).key;
    const writeKey = (await createApiKey(t, owner.tokens.access_token, ['webhooks:write'])).key;
    const otherKey = (await createApiKey(t, owner.tokens.access_token, ['geofences:write'])).key;

    expectStatus(await call(t, '/webhooks', { apiKey: readKey }), 200);
    expectStatus(await call(t, `/webhooks/${created.id}`, { token: readKey }), 200);
    const refusals: Array<[string, 'POST' | 'PATCH' | 'DELETE' | 'GET', unknown]> = [
      ['/webhooks', 'POST', { name: 'x', url: 'https://x.example/' }],
      [`/webhooks/${created.id}`, 'PATCH', { name: 'x' }],
      [`/webhooks/${created.id}`, 'DELETE', undefined],
      [`/webhooks/${created.id}/secret`, 'GET', undefined],
      [`/webhooks/${created.id}/rotate-secret`, 'POST', undefined],
    ];
    for (const [path, method, body] of refusals) {
      const res = await call(t, path, { apiKey: readKey, method, ...(body ? { body } : {}) });
      const error = expectError(res, 403, 'INSUFFICIENT_PERMISSIONS', `${method} ${path}`);
      assert.match(String(error.detail), /requires scope webhooks:write/);
    }
    const denied = expectError(
      await call(t, '/webhooks', { apiKey: otherKey }),
      403,
      'INSUFFICIENT_PERMISSIONS',
    );
    assert.match(String(denied.detail), /webhooks:read/);
    expectError(await call(t, '/webhooks'), 401, undefined);

    // write implies read; the write key can do everything.
    expectStatus(await call(t, '/webhooks', { apiKey: writeKey }), 200);
    const made = await create({ name: 'By key', url: 'https://k.example/' }, { apiKey: writeKey });
    expectStatus(await call(t, `/webhooks/${made.id}/secret`, { apiKey: writeKey }), 200);
    expectStatus(
      await call(t, `/webhooks/${made.id}/rotate-secret`, { apiKey: writeKey, method: 'POST' }),
      200,
    );
    expectStatus(
      await call(t, `/webhooks/${made.id}`, { apiKey: writeKey, method: 'PATCH', body: { name: 'y' } }),
      200,
    );
    assert.equal(
      (await call(t, `/webhooks/${made.id}`, { apiKey: writeKey, method: 'DELETE' })).statusCode,
      204,
    );
  });

  test('the OpenAPI document describes every webhook configuration route', async () => {
    const doc = (await t.app.inject({ url: '/openapi/openapi.json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const paths = doc.paths;
    assert.ok(paths['/api/v1/webhooks']?.post && paths['/api/v1/webhooks']?.get);
    const one = paths['/api/v1/webhooks/{webhook_id}'];
    assert.ok(one?.get && one.patch && one.delete);
    assert.ok(paths['/api/v1/webhooks/{webhook_id}/secret']?.get);
    assert.ok(paths['/api/v1/webhooks/{webhook_id}/rotate-secret']?.post);
  });
});

describe('private targets (WEBHOOK_ALLOW_PRIVATE_TARGETS=false)', () => {
  let t: TestApp;
  let jwt: { token: string };

  before(async () => {
    t = await startIdentityApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    jwt = { token: (await signUp(t, 'ssrf')).tokens.access_token };
  });
  after(async () => t?.close());

  const refused = [
    'http://127.0.0.1/hook',
    'http://[::1]:8080/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://0x7f000001/hook',
    'http://2130706433/hook',
    'http://0177.0.0.1/hook',
    'http://127.1/hook',
    'http://127.0.0.1./hook',
    'https://10.1.2.3/hook',
    'https://192.168.0.10/hook',
    'https://172.20.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00:ec2::254]/',
    'http://100.64.1.1/',
    'http://224.0.0.1/',
    'http://0.0.0.0:8080/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://[64:ff9b::a00:1]/',
  ];

  test('a literal private address in any spelling → 400 VALIDATION_ERROR on create', async () => {
    for (const url of refused) {
      const body = expectError(
        await call(t, '/webhooks', { ...jwt, body: { name: 'SSRF', url } }),
        400,
        'VALIDATION_ERROR',
        url,
      );
      assert.equal(typeof body.detail, 'string', url);
      assert.match(String(body.detail), /WEBHOOK_ALLOW_PRIVATE_TARGETS=true/, url);
    }
    const loopback = expectError(
      await call(t, '/webhooks', { ...jwt, body: { name: 'SSRF', url: 'http://0x7f000001/' } }),
      400,
      'VALIDATION_ERROR',
    );
    assert.match(String(loopback.detail), /is a loopback address \(127\.0\.0\.1\)/);
    const list = expectStatus<Page<WebhookOut>>(await call(t, '/webhooks', jwt), 200);
    assert.equal(list.pagination.total, 0);
  });

  test('… and on update; public literals and host names are accepted', async () => {
    const created = expectStatus<CreatedWebhook>(
      await call(t, '/webhooks', { ...jwt, body: { name: 'Public', url: 'https://93.184.216.34/hook' } }),
      201,
    );
    for (const url of refused) {
      expectError(
        await call(t, `/webhooks/${created.id}`, { ...jwt, method: 'PATCH', body: { url } }),
        400,
        'VALIDATION_ERROR',
        url,
      );
    }
    // Host names are checked on the resolved address at delivery time (contract §5).
    for (const url of [
      'https://hooks.example.com/',
      'http://localhost:9/',
      'https://[2606:4700:4700::1111]/',
    ]) {
      expectStatus(
        await call(t, `/webhooks/${created.id}`, { ...jwt, method: 'PATCH', body: { url } }),
        200,
        url,
      );
    }
  });

  test('the plan webhook count limit → 403 QUOTA_EXCEEDED (free plan: 5)', async () => {
    const token = (await signUp(t, 'quota')).tokens.access_token;
    for (let i = 0; i < 5; i++) {
      expectStatus(
        await call(t, '/webhooks', { token, body: { name: `Q${i}`, url: 'https://q.example/' } }),
        201,
      );
    }
    const refused = expectError(
      await call(t, '/webhooks', { token, body: { name: 'Q5', url: 'https://q.example/' } }),
      403,
      'QUOTA_EXCEEDED',
    );
    assert.match(String(refused.detail), /5 webhooks/);
    const list = expectStatus<Page<WebhookOut>>(await call(t, '/webhooks', { token }), 200);
    assert.equal(list.pagination.total, 5);
  });

  test('allowed when WEBHOOK_ALLOW_PRIVATE_TARGETS=true', async () => {
    const open = await startIdentityApp({ env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    try {
      const token = (await signUp(open, 'ssrf-open')).tokens.access_token;
      for (const url of ['http://127.0.0.1:8080/hook', 'http://[::1]/', 'http://169.254.169.254/']) {
        expectStatus(await call(open, '/webhooks', { token, body: { name: 'Local', url } }), 201, url);
      }
    } finally {
      await open.close();
    }
  });
});
