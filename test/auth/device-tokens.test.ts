/**
 * Device tokens (contract §2.3b) through the real app: created per device (the secret shown once,
 * only its hash stored), listed and revoked with devices:write; sent like an API key, a token
 * writes its own device's locations (single and batch) and nothing else, is revoked with its
 * device, is rate-limited per token like an API key (§7), and is documented in the OpenAPI.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import {
  call,
  createApiKey,
  expectError,
  expectStatus,
  fetchOpenApi,
  type Page,
  type SignedUpUser,
  signUp,
  startIdentityApp,
} from '../helpers/identity.ts';
import { dropPrefix, REDIS_URL, redisReachable, uniquePrefix } from '../helpers/redis.ts';
import { at, type BatchOut, createDevice, type DeviceOut, type LocationOut } from '../locations/helpers.ts';

interface DeviceTokenOut {
  id: string;
  name: string | null;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

interface CreatedDeviceToken extends DeviceTokenOut {
  token: string;
}

describe('device tokens', () => {
  let t: TestApp;
  let owner: SignedUpUser;
  let jwt: { token: string };

  before(async () => {
    t = await startIdentityApp();
    owner = await signUp(t, 'devtok');
    jwt = { token: owner.tokens.access_token };
  });
  after(async () => t?.close());

  async function newToken(deviceId: string, name?: string): Promise<CreatedDeviceToken> {
    const res = await call(t, `/devices/${deviceId}/tokens`, {
      ...jwt,
      body: name === undefined ? {} : { name },
    });
    return expectStatus<CreatedDeviceToken>(res, 201, 'create device token');
  }

  async function listTokens(deviceId: string): Promise<Page<DeviceTokenOut>> {
    return expectStatus<Page<DeviceTokenOut>>(
      await call(t, `/devices/${deviceId}/tokens`, jwt),
      200,
      'list device tokens',
    );
  }

  function postLocation(credentials: { token?: string; apiKey?: string }, deviceId: string, step = 0) {
    return call(t, `/devices/${deviceId}/locations`, {
      ...credentials,
      body: { coordinates: [13.4, 52.5], timestamp: at(step) },
    });
  }

  async function deviceCount(): Promise<number> {
    const row = await t.deps.database.db
      .selectFrom('devices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('workspace_id', '=', owner.workspace.id)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  test('create, list and revoke; the secret is shown once and stored only as a hash', async () => {
    const device = await createDevice(t, jwt, { name: 'phone' });
    const named = await newToken(device.id, "Anna's phone");
    assert.deepEqual(Object.keys(named).sort(), [
      'created_at',
      'id',
      'last_used_at',
      'name',
      'prefix',
      'token',
    ]);
    assert.equal(named.name, "Anna's phone");
    assert.match(named.token, /^gf_dev_.{32,}$/);
    assert.equal(named.prefix, named.token.slice(0, 12));
    assert.equal(named.last_used_at, null);
    assert.ok(!Number.isNaN(Date.parse(named.created_at)));

    const unnamed = await newToken(device.id);
    assert.equal(unnamed.name, null);
    assert.notEqual(unnamed.token, named.token);

    const list = await listTokens(device.id);
    assert.equal(list.pagination.total, 2);
    assert.equal(list.pagination.has_more, false);
    assert.deepEqual(list.results.map((r) => r.id).sort(), [named.id, unnamed.id].sort());
    for (const item of list.results) {
      assert.equal('token' in item, false, 'no secret in the list');
      assert.deepEqual(Object.keys(item).sort(), ['created_at', 'id', 'last_used_at', 'name', 'prefix']);
    }

    // The row keeps the SHA-256 of the token and never the token itself.
    const row = await t.deps.database.db
      .selectFrom('device_tokens')
      .selectAll()
      .where('id', '=', named.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.token_hash, createHash('sha256').update(named.token).digest('hex'));
    assert.equal(row.device_id, device.id);
    assert.equal(JSON.stringify(row).includes(named.token), false, 'the token is not in the row');

    // Works before revocation (and is cached), refused at once after it.
    expectStatus(await postLocation({ token: named.token }, device.id), 201, 'before revoke');
    expectStatus(
      await call(t, `/devices/${device.id}/tokens/${named.id}`, { ...jwt, method: 'DELETE' }),
      204,
      'revoke',
    );
    expectError(await postLocation({ token: named.token }, device.id, 1), 401, undefined, 'revoked');
    // The other token is untouched.
    expectStatus(await postLocation({ token: unnamed.token }, device.id, 2), 201, 'other token');
    assert.deepEqual(
      (await listTokens(device.id)).results.map((r) => r.id),
      [unnamed.id],
    );
    // A second revocation of the same token: it is gone.
    const again = expectError(
      await call(t, `/devices/${device.id}/tokens/${named.id}`, { ...jwt, method: 'DELETE' }),
      404,
      'NOT_FOUND',
    );
    assert.equal(again.detail, 'Device token not found');
  });

  test('unknown device or token → 404; managing tokens needs devices:write', async () => {
    const missing = expectError(
      await call(t, '/devices/no-such-device/tokens', { ...jwt, body: { name: 'x' } }),
      404,
      'NOT_FOUND',
      'create on unknown device',
    );
    assert.equal(missing.detail, 'Device not found');
    const missingList = expectError(
      await call(t, '/devices/no-such-device/tokens', jwt),
      404,
      'NOT_FOUND',
      'list on unknown device',
    );
    assert.equal(missingList.detail, 'Device not found');

    const device = await createDevice(t, jwt);
    const unknownToken = expectError(
      await call(t, `/devices/${device.id}/tokens/no-such-token`, { ...jwt, method: 'DELETE' }),
      404,
      'NOT_FOUND',
      'revoke unknown token',
    );
    assert.equal(unknownToken.detail, 'Device token not found');

    // A token id of another device does not revoke it through this one.
    const other = await createDevice(t, jwt);
    const otherToken = await newToken(other.id);
    expectError(
      await call(t, `/devices/${device.id}/tokens/${otherToken.id}`, { ...jwt, method: 'DELETE' }),
      404,
      'NOT_FOUND',
      "revoke another device's token",
    );
    expectStatus(await postLocation({ token: otherToken.token }, other.id), 201, 'still valid');

    const reader = await createApiKey(t, jwt.token, ['devices:read']);
    const refused = expectError(
      await call(t, `/devices/${device.id}/tokens`, { apiKey: reader.key, body: { name: 'x' } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'devices:read key creates',
    );
    assert.match(String(refused.detail), /devices:write/);
    expectError(
      await call(t, `/devices/${device.id}/tokens`, { apiKey: reader.key }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'devices:read key lists',
    );
    // A key that manages devices but may not write locations cannot mint itself a location writer.
    const deviceManager = await createApiKey(t, jwt.token, ['devices:write']);
    const escalation = expectError(
      await call(t, `/devices/${device.id}/tokens`, { apiKey: deviceManager.key, body: { name: 'x' } }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'devices:write key without locations:write creates',
    );
    assert.match(String(escalation.detail), /requires scope locations:write/);
    expectStatus(
      await call(t, `/devices/${device.id}/tokens`, { apiKey: deviceManager.key }),
      200,
      'devices:write key lists',
    );
    const writer = await createApiKey(t, jwt.token, ['devices:write', 'locations:write']);
    const made = expectStatus<CreatedDeviceToken>(
      await call(t, `/devices/${device.id}/tokens`, { apiKey: writer.key, body: { name: 'by key' } }),
      201,
      'devices:write + locations:write key creates',
    );
    assert.match(made.token, /^gf_dev_/);

    // Another workspace does not see this device at all.
    const stranger = await signUp(t, 'devtok-stranger');
    expectError(
      await call(t, `/devices/${device.id}/tokens`, { token: stranger.tokens.access_token, body: {} }),
      404,
      'NOT_FOUND',
      'another workspace',
    );
  });

  test("a token writes its own device's locations and is refused everywhere else", async () => {
    const own = await createDevice(t, jwt, { name: 'own' });
    const other = await createDevice(t, jwt, { name: 'other' });
    const { token } = await newToken(own.id, 'phone');

    const viaBearer = expectStatus<{ location: LocationOut }>(
      await postLocation({ token }, own.id, 0),
      201,
      'as Bearer',
    );
    assert.equal(viaBearer.location.device_id, own.id);
    const viaHeader = expectStatus<{ location: LocationOut }>(
      await postLocation({ apiKey: token }, own.id, 1),
      201,
      'as X-API-Key',
    );
    assert.equal(viaHeader.location.device_id, own.id);
    const stored = expectStatus<DeviceOut>(await call(t, `/devices/${own.id}`, jwt), 200);
    assert.equal(stored.last_location?.timestamp, at(1));

    for (const credentials of [{ token }, { apiKey: token }]) {
      const res = await postLocation(credentials, other.id, 2);
      const body = expectStatus<Record<string, unknown>>(res, 404, "another device's location route");
      assert.deepEqual(body, { detail: 'Device not found', error_code: 'NOT_FOUND' });
    }
    const untouched = expectStatus<DeviceOut>(await call(t, `/devices/${other.id}`, jwt), 200);
    assert.equal(untouched.last_location, null, 'nothing written to the other device');

    expectError(await call(t, '/geofences', { token }), 403, 'INSUFFICIENT_PERMISSIONS', 'GET /geofences');
    expectError(
      await call(t, '/geofences', { apiKey: token }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'GET /geofences (X-API-Key)',
    );
    expectError(
      await call(t, `/devices/${own.id}`, { token }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'GET own device',
    );
    expectError(
      await call(t, `/devices/${own.id}/tokens`, { token, body: {} }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'a token making tokens',
    );
    expectError(
      await call(t, `/devices/${own.id}`, { token, method: 'DELETE' }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'a token deleting its device',
    );
    expectError(
      await call(t, `/devices/${own.id}/locations`, { token }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'a token reading its own history',
    );
    // Contract §2.3b: "any other route → 403 INSUFFICIENT_PERMISSIONS", the API-key-only check
    // included; it never answers 200 (a device token is not an API key).
    expectError(
      await call(t, '/auth/test-api-key', { token }),
      403,
      'INSUFFICIENT_PERMISSIONS',
      'GET /auth/test-api-key',
    );

    // A made-up token of the right shape is a bad credential.
    expectError(
      await postLocation({ token: `gf_dev_${'x'.repeat(43)}` }, own.id),
      401,
      undefined,
      'unknown token',
    );
  });

  test('batch: items of its own device are stored, any other device is rejected alone and never created', async () => {
    const own = await createDevice(t, jwt, { name: 'own', external_id: 'own-ext' });
    const other = await createDevice(t, jwt, { name: 'other', external_id: 'other-ext' });
    const { token } = await newToken(own.id);
    const before = await deviceCount();

    const result = expectStatus<BatchOut>(
      await call(t, '/locations/batch', {
        token,
        body: {
          locations: [
            { device_id: own.id, coordinates: [1, 1], timestamp: at(0) }, // 0 own by id
            { device_id: other.id, coordinates: [1, 1], timestamp: at(0) }, // 1 other by id
            { device_external_id: 'own-ext', coordinates: [1, 1.001], timestamp: at(1) }, // 2 own by external id
            { device_external_id: 'other-ext', coordinates: [1, 1], timestamp: at(1) }, // 3 other, existing
            { device_external_id: 'brand-new-ext', coordinates: [1, 1], timestamp: at(1) }, // 4 unknown
            { device_id: 'no-such-device', coordinates: [1, 1], timestamp: at(1) }, // 5 unknown id
          ],
        },
      }),
      200,
      'batch with a device token',
    );
    assert.equal(result.accepted, 2);
    assert.deepEqual(
      result.rejected.map((r) => [r.index, r.detail]),
      [
        [1, 'Device not found'],
        [3, 'Device not found'],
        [4, 'Device not found'],
        [5, 'Device not found'],
      ],
    );
    assert.equal(await deviceCount(), before, 'no device created for an unknown external id');
    const created = await t.deps.database.db
      .selectFrom('devices')
      .select('id')
      .where('external_id', '=', 'brand-new-ext')
      .execute();
    assert.deepEqual(created, []);

    const ownNow = expectStatus<DeviceOut>(await call(t, `/devices/${own.id}`, jwt), 200);
    assert.equal(ownNow.last_location?.timestamp, at(1));
    const otherNow = expectStatus<DeviceOut>(await call(t, `/devices/${other.id}`, jwt), 200);
    assert.equal(otherNow.last_location, null, "the other device's items were not stored");
    const history = expectStatus<Page<LocationOut>>(
      await call(t, `/devices/${own.id}/locations`, jwt),
      200,
      'own history',
    );
    assert.equal(history.pagination.total, 2);

    // The same batch by the workspace's JWT does create the unknown external id (the contrast).
    const byUser = expectStatus<BatchOut>(
      await call(t, '/locations/batch', {
        ...jwt,
        body: { locations: [{ device_external_id: 'brand-new-ext', coordinates: [1, 1], timestamp: at(2) }] },
      }),
      200,
    );
    assert.equal(byUser.accepted, 1);
    assert.equal(await deviceCount(), before + 1);
  });

  test('deleting the device revokes its tokens at once', async () => {
    const doomed = await createDevice(t, jwt, { name: 'doomed' });
    const survivor = await createDevice(t, jwt, { name: 'survivor' });
    const { token, id } = await newToken(doomed.id);
    // Used (and so cached) before the deletion.
    expectStatus(await postLocation({ token }, doomed.id), 201, 'before delete');
    expectStatus(await call(t, `/devices/${doomed.id}`, { ...jwt, method: 'DELETE' }), 204, 'delete device');

    // Not 404 ("another device"): the token itself is no longer a credential.
    expectError(await postLocation({ token }, survivor.id, 1), 401, undefined, 'other device');
    expectError(await postLocation({ token }, doomed.id, 1), 401, undefined, 'own (deleted) device');
    expectError(
      await call(t, '/locations/batch', {
        apiKey: token,
        body: { locations: [{ device_id: doomed.id, coordinates: [1, 1] }] },
      }),
      401,
      undefined,
      'batch',
    );
    const rows = await t.deps.database.db
      .selectFrom('device_tokens')
      .select('id')
      .where('id', '=', id)
      .execute();
    assert.deepEqual(rows, [], 'the token row went with its device');
  });

  test('last_used_at is recorded after use', async () => {
    const device = await createDevice(t, jwt);
    const created = await newToken(device.id, 'tracker');
    assert.equal((await listTokens(device.id)).results[0]?.last_used_at, null);
    expectStatus(await postLocation({ apiKey: created.token }, device.id), 201);
    // The use is written off the request path: wait for it briefly.
    let lastUsed: string | null | undefined = null;
    for (let i = 0; i < 50 && !lastUsed; i++) {
      lastUsed = (await listTokens(device.id)).results.find((r) => r.id === created.id)?.last_used_at;
      if (!lastUsed) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(lastUsed, t.clock.now().toISOString());
  });

  test('OpenAPI documents the token routes and the device token on createLocation', async () => {
    const doc = await fetchOpenApi(t);
    const operations = new Map<string, { security?: Array<Record<string, string[]>> }>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const id = (op as { operationId?: string }).operationId;
        if (id) operations.set(id, op);
        if (id === 'createDeviceToken')
          assert.equal(`${method} ${path}`, 'post /api/v1/devices/{device_id}/tokens');
        if (id === 'revokeDeviceToken')
          assert.equal(`${method} ${path}`, 'delete /api/v1/devices/{device_id}/tokens/{token_id}');
      }
    }
    for (const id of ['createDeviceToken', 'listDeviceTokens', 'revokeDeviceToken']) {
      assert.ok(operations.has(id), `operationId ${id}`);
    }
    const createLocation = operations.get('createLocation');
    assert.ok(createLocation, 'createLocation');
    assert.ok(
      createLocation.security?.some((s) => JSON.stringify(s) === JSON.stringify({ deviceToken: [] })),
      `createLocation security ${JSON.stringify(createLocation.security)}`,
    );
    // A route a device token cannot call does not offer it.
    const getDevice = operations.get('getDevice');
    assert.ok(getDevice, 'getDevice');
    assert.ok(!getDevice.security?.some((s) => 'deviceToken' in s), 'getDevice security');
  });
});

function rateLimitSuite(env: () => Record<string, string>): void {
  let t: TestApp;
  let jwt: { token: string };

  before(async () => {
    t = await startIdentityApp({ env: env() });
    jwt = { token: (await signUp(t, 'devtok-rl')).tokens.access_token };
  });
  after(async () => t?.close());

  test('X-RateLimit-* on every answer, 429 after the plan limit, a second token has its own budget', async () => {
    const device = await createDevice(t, jwt);
    const first = expectStatus<CreatedDeviceToken>(
      await call(t, `/devices/${device.id}/tokens`, { ...jwt, body: { name: 'first' } }),
      201,
    );
    const second = expectStatus<CreatedDeviceToken>(
      await call(t, `/devices/${device.id}/tokens`, { ...jwt, body: { name: 'second' } }),
      201,
    );
    // The free plan allows 100 API requests per token per hour (contract §7).
    for (let i = 0; i < 100; i++) {
      // Every request of a recognised token counts, whatever the route answers.
      const res =
        i % 2 === 0
          ? await call(t, `/devices/${device.id}/locations`, {
              token: first.token,
              body: { coordinates: [0, 0] },
            })
          : await call(t, '/geofences', { token: first.token });
      assert.equal(res.statusCode, i % 2 === 0 ? 201 : 403, `request ${i + 1}: ${res.body}`);
      assert.equal(Number(res.headers['x-ratelimit-limit']), 100, `limit header ${i + 1}`);
      assert.equal(Number(res.headers['x-ratelimit-remaining']), 99 - i, `remaining header ${i + 1}`);
      assert.ok(Number(res.headers['x-ratelimit-reset']) > 0);
    }
    const refused = await call(t, `/devices/${device.id}/locations`, {
      token: first.token,
      body: { coordinates: [0, 0] },
    });
    const body = expectError(refused, 429, 'RATE_LIMIT_EXCEEDED');
    assert.deepEqual(body.details, { limit: 100, period_seconds: 3600 });
    assert.equal(Number(refused.headers['x-ratelimit-remaining']), 0);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    expectError(
      await call(t, '/locations/batch', {
        apiKey: first.token,
        body: { locations: [{ device_id: device.id, coordinates: [0, 0] }] },
      }),
      429,
      'RATE_LIMIT_EXCEEDED',
      'batch with the spent token',
    );

    // The second token of the same device has a budget of its own.
    const other = await call(t, `/devices/${device.id}/locations`, {
      token: second.token,
      body: { coordinates: [0, 0] },
    });
    expectStatus(other, 201, 'second token');
    assert.equal(Number(other.headers['x-ratelimit-remaining']), 99);

    // The workspace's user is not limited by its devices' tokens.
    const byUser = await call(t, `/devices/${device.id}/locations`, {
      ...jwt,
      body: { coordinates: [0, 0] },
    });
    expectStatus(byUser, 201, 'JWT');
    assert.equal(byUser.headers['x-ratelimit-limit'], undefined);

    // An hour later the first token is accepted again.
    t.clock.advance(3_600_000);
    expectStatus(
      await call(t, `/devices/${device.id}/locations`, { token: first.token, body: { coordinates: [0, 0] } }),
      201,
      'an hour later',
    );
  });
}

describe('device tokens are rate-limited per token like API keys, memory store', () =>
  rateLimitSuite(() => ({})));

describe('device tokens are rate-limited per token like API keys, Redis store', async () => {
  const reachable = await redisReachable();
  const prefix = uniquePrefix('device-token');
  after(async () => {
    if (reachable) await dropPrefix(prefix);
  });
  if (!reachable) {
    test('needs Redis at REDIS_TEST_URL', { skip: 'no Redis' }, () => {});
    return;
  }
  rateLimitSuite(() => ({ REDIS_URL, REDIS_KEY_PREFIX: prefix }));
});
