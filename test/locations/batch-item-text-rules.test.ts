/**
 * Contract §1 in POST /locations/batch: an item that breaks the text rules (NUL, lone surrogate),
 * nests too deep or carries a timestamp the databases cannot store is rejected on its own, in the
 * batch's per-item format, and the other items are stored — on both databases alike. Before, one
 * such item made PostgreSQL fail the whole batch (500, nothing stored), and on SQLite an external
 * id with a lone surrogate created a device and then lost the location on every retry.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestApp } from '../helpers/app.ts';
import { call, expectStatus, type Page, signUp, startIdentityApp } from '../helpers/identity.ts';
import { at, type BatchOut, createDevice, type DeviceOut } from './helpers.ts';

describe('batch items breaking the input rules are rejected alone', () => {
  let t: TestApp;
  let jwt: { token: string };

  before(async () => {
    t = await startIdentityApp();
    jwt = { token: (await signUp(t, 'batch-text')).tokens.access_token };
  });
  after(async () => t?.close());

  const historyTotal = async (deviceId: string) =>
    expectStatus<Page<unknown>>(await call(t, `/devices/${deviceId}/locations`, jwt), 200, 'history')
      .pagination.total;
  const deviceCount = async () =>
    expectStatus<Page<DeviceOut>>(await call(t, '/devices', jwt), 200, 'devices').pagination.total;

  /** 99 good items of a fresh device and `bad` as item 99. */
  async function ninetyNineAnd(bad: (deviceId: string) => Record<string, unknown>) {
    const device = await createDevice(t, jwt);
    const good = Array.from({ length: 99 }, (_v, i) => ({
      device_id: device.id,
      coordinates: [1, 2],
      timestamp: at(i),
    }));
    const res = await call(t, '/locations/batch', { ...jwt, body: { locations: [...good, bad(device.id)] } });
    return { device, result: expectStatus<BatchOut>(res, 200, 'batch') };
  }

  const cases: Array<[string, (deviceId: string) => Record<string, unknown>, Array<string | number>]> = [
    [
      'a NUL in metadata',
      (id) => ({ device_id: id, coordinates: [1, 2], metadata: { a: 'x\u0000' } }),
      ['metadata', 'a'],
    ],
    [
      'a lone surrogate in a metadata key',
      (id) => ({ device_id: id, coordinates: [1, 2], metadata: { '\ud800': 1 } }),
      ['metadata', '\ud800'],
    ],
    ['a lone surrogate as device_id', () => ({ device_id: '\ud800', coordinates: [1, 2] }), ['device_id']],
    [
      'the year 0000',
      (id) => ({ device_id: id, coordinates: [1, 2], timestamp: '0000-01-01T00:00:00Z' }),
      ['timestamp'],
    ],
    [
      'the year 0000 reached through an offset',
      (id) => ({ device_id: id, coordinates: [1, 2], timestamp: '0001-01-01T00:30:00+01:00' }),
      ['timestamp'],
    ],
    [
      'a timestamp before 1970',
      (id) => ({ device_id: id, coordinates: [1, 2], timestamp: '1969-12-31T23:59:59Z' }),
      ['timestamp'],
    ],
  ];
  for (const [what, bad, loc] of cases) {
    test(`99 good items and one with ${what}: 99 stored, that one rejected at its loc`, async () => {
      const { device, result } = await ninetyNineAnd(bad);
      assert.equal(result.accepted, 99);
      assert.equal(result.rejected.length, 1, JSON.stringify(result.rejected));
      const [rejection] = result.rejected;
      assert.equal(rejection?.index, 99);
      assert.ok(Array.isArray(rejection?.detail), JSON.stringify(rejection));
      const issue = (rejection?.detail as Array<{ type: string; loc: unknown[] }> | undefined)?.[0];
      assert.equal(issue?.type, 'value_error');
      assert.deepEqual(issue?.loc, ['body', 'locations', 99, ...loc]);
      assert.equal(await historyTotal(device.id), 99);
    });
  }

  test('an item nested 10,000 levels deep is rejected alone (no stack overflow)', async () => {
    const device = await createDevice(t, jwt);
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/locations/batch',
      headers: { authorization: `Bearer ${jwt.token}`, 'content-type': 'application/json' },
      payload:
        `{"locations": [{"device_id": "${device.id}", "coordinates": [1, 2], "timestamp": "${at(0)}"},` +
        ` {"device_id": "${device.id}", "coordinates": [1, 2], "metadata": ${deep}}]}`,
    });
    const result = expectStatus<BatchOut>(res, 200, 'deep batch');
    assert.equal(result.accepted, 1);
    assert.deepEqual(
      result.rejected.map((r) => r.index),
      [1],
    );
    const issue = (result.rejected[0]?.detail as Array<{ type: string; loc: unknown[] }> | undefined)?.[0];
    assert.equal(issue?.type, 'value_error');
    assert.deepEqual(issue?.loc.slice(0, 5), ['body', 'locations', 1, 'metadata', 'a']);
  });

  test('metadata nested 17 levels is rejected at the 17th level, 16 levels are stored', async () => {
    const device = await createDevice(t, jwt);
    const nest = (levels: number): unknown => {
      let value: unknown = 'leaf';
      for (let i = 0; i < levels; i++) value = { k: value };
      return value;
    };
    const res = await call(t, '/locations/batch', {
      ...jwt,
      body: {
        locations: [
          { device_id: device.id, coordinates: [1, 2], timestamp: at(0), metadata: nest(16) },
          { device_id: device.id, coordinates: [1, 2], timestamp: at(1), metadata: nest(17) },
        ],
      },
    });
    const result = expectStatus<BatchOut>(res, 200, 'batch');
    assert.equal(result.accepted, 1);
    assert.deepEqual(result.rejected, [
      {
        index: 1,
        detail: [
          {
            type: 'value_error',
            loc: ['body', 'locations', 1, 'metadata', ...Array<string>(16).fill('k')],
            msg: 'Object nests more than 16 levels deep',
          },
        ],
      },
    ]);
  });

  test('an external id with a lone surrogate creates no device, and a retry answers the same', async () => {
    const before = await deviceCount();
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await call(t, '/locations/batch', {
        ...jwt,
        body: {
          locations: [
            { device_external_id: 'truck\ud800', coordinates: [1, 2] },
            { device_external_id: 'truck\udc00', coordinates: [1, 2] },
            { device_external_id: 'truck-ok', coordinates: [1, 2] },
          ],
        },
      });
      const result = expectStatus<BatchOut>(res, 200, `attempt ${attempt}`);
      assert.equal(result.accepted, 1);
      assert.deepEqual(
        result.rejected.map((r) => [r.index, (r.detail as Array<{ loc: unknown[] }>)[0]?.loc]),
        [
          [0, ['body', 'locations', 0, 'device_external_id']],
          [1, ['body', 'locations', 1, 'device_external_id']],
        ],
      );
    }
    assert.equal(await deviceCount(), before + 1, 'only truck-ok was created');
  });
});
