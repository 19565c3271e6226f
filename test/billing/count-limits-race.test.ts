/**
 * Count limits under concurrency (contract §7): however many creates race in one workspace —
 * single, batch, or devices created by batch ingestion — the count never ends above the plan's
 * limit, and a create is refused only when it would pass it. The requests run at once through the
 * real pool (4 connections on PostgreSQL), on one app and across two apps sharing one database
 * (two nodes: each has its own pool and its own in-process queue of creates, so only the database's
 * lock keeps their count). Free plan (src/billing/plans.ts): 50 geofences, 5 webhooks, 100 devices.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { DEFAULT_PLANS } from '../../src/billing/plans.ts';
import type { TestApp } from '../helpers/app.ts';
import { createSharedTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { call, expectError, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';

const FREE = DEFAULT_PLANS.find((p) => p.id === 'free')?.limits;
const GEOFENCES = FREE?.geofences ?? 0;
const WEBHOOKS = FREE?.webhooks ?? 0;
const DEVICES = FREE?.devices ?? 0;

interface BatchAnswer {
  created: Array<{ id: string }>;
  updated: unknown[];
  rejected: Array<{ index: number; error_code?: string; details?: Record<string, unknown> }>;
}

interface Usage {
  geofences: { count: number; limit: number };
  webhooks: { count: number; limit: number };
  devices: { count: number; limit: number };
}

function square(i: number): unknown {
  const x = (i % 100) / 10;
  const y = Math.floor(i / 100) / 10;
  return {
    type: 'Polygon',
    coordinates: [
      [
        [x, y],
        [x + 0.05, y],
        [x + 0.05, y + 0.05],
        [x, y + 0.05],
        [x, y],
      ],
    ],
  };
}

function geofenceBatch(first: number, size: number): unknown {
  return {
    geofences: Array.from({ length: size }, (_v, i) => ({
      name: `g${first + i}`,
      geometry: square(first + i),
    })),
  };
}

function locationBatch(prefix: string, size: number): unknown {
  return {
    locations: Array.from({ length: size }, (_v, i) => ({
      device_external_id: `${prefix}-${i}`,
      coordinates: [10 + i / 1000, 50],
    })),
  };
}

async function usage(t: TestApp, token: string): Promise<Usage> {
  return expectStatus<Usage>(await call(t, '/subscriptions/usage', { token }), 200);
}

/** Each answer is one of the statuses given; returns how many had each. */
function tally(answers: LightMyRequestResponse[], allowed: number[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const answer of answers) {
    assert.ok(allowed.includes(answer.statusCode), `unexpected ${answer.statusCode} ${answer.body}`);
    counts.set(answer.statusCode, (counts.get(answer.statusCode) ?? 0) + 1);
  }
  return counts;
}

/** Every refusal is the contract's 403 QUOTA_EXCEEDED naming the resource and its limit. */
function expectQuotaRefusals(answers: LightMyRequestResponse[], resource: string, limit: number): void {
  for (const answer of answers) {
    if (answer.statusCode !== 403) continue;
    const body = expectError(answer, 403, 'QUOTA_EXCEEDED', resource);
    assert.equal(body.details?.resource, resource);
    assert.equal(body.details?.limit, limit);
    assert.ok(Number(body.details?.count) <= limit, `count as seen ${JSON.stringify(body.details)}`);
  }
}

/** Runs the races on `nodes` (one app, or two apps sharing one database), round-robin. */
function races(label: string, nodes: () => TestApp[]): void {
  const on = (i: number): TestApp => {
    const all = nodes();
    return all[i % all.length] as TestApp;
  };

  test(`${label}: 10 parallel geofence batches of 50 create exactly ${GEOFENCES}`, async () => {
    const token = (await signUp(on(0), 'race-geofence-batch')).tokens.access_token;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_v, b) =>
        call(on(b), '/geofences/batch', { token, body: geofenceBatch(b * 50, 50) }),
      ),
    );
    let created = 0;
    for (const answer of answers) {
      const body = expectStatus<BatchAnswer>(answer, 200);
      created += body.created.length;
      assert.equal(body.created.length + body.rejected.length, 50);
      for (const rejection of body.rejected) {
        assert.equal(rejection.error_code, 'QUOTA_EXCEEDED', JSON.stringify(rejection));
        assert.deepEqual(rejection.details, { resource: 'geofences', limit: GEOFENCES, count: GEOFENCES });
      }
    }
    assert.equal(created, GEOFENCES, 'created across the batches');
    assert.deepEqual((await usage(on(1), token)).geofences, { count: GEOFENCES, limit: GEOFENCES });
  });

  test(`${label}: 10 parallel location batches of 80 new devices stay within ${DEVICES}`, async () => {
    const token = (await signUp(on(0), 'race-device-batch')).tokens.access_token;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_v, b) =>
        call(on(b), '/locations/batch', { token, body: locationBatch(`b${b}`, 80) }),
      ),
    );
    // A batch that would pass the limit is refused whole: one fits, the others cannot.
    const counts = tally(answers, [200, 403]);
    expectQuotaRefusals(answers, 'devices', DEVICES);
    assert.equal(counts.get(200), 1, 'one batch of 80 fits under 100');
    for (const answer of answers) {
      if (answer.statusCode === 200) assert.equal(answer.json<{ accepted: number }>().accepted, 80);
    }
    assert.deepEqual((await usage(on(1), token)).devices, { count: 80, limit: DEVICES });
  });

  test(`${label}: 10 parallel location batches of 15 new devices: exactly the 6 that fit`, async () => {
    const token = (await signUp(on(0), 'race-device-small')).tokens.access_token;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_v, b) =>
        call(on(b), '/locations/batch', { token, body: locationBatch(`s${b}`, 15) }),
      ),
    );
    const counts = tally(answers, [200, 403]);
    expectQuotaRefusals(answers, 'devices', DEVICES);
    // Refused only when it would pass the limit: 6 × 15 = 90 fit, a 7th would make 105.
    assert.equal(counts.get(200), 6, 'as many as fit, no more, no fewer');
    assert.deepEqual((await usage(on(1), token)).devices, { count: 90, limit: DEVICES });
  });

  test(`${label}: 100 parallel POST /webhooks create exactly ${WEBHOOKS}`, async () => {
    const token = (await signUp(on(0), 'race-webhooks')).tokens.access_token;
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_v, i) =>
        call(on(i), '/webhooks', { token, body: { name: `h${i}`, url: 'http://127.0.0.1:9/hook' } }),
      ),
    );
    const counts = tally(answers, [201, 403]);
    expectQuotaRefusals(answers, 'webhooks', WEBHOOKS);
    assert.equal(counts.get(201), WEBHOOKS);
    assert.deepEqual((await usage(on(1), token)).webhooks, { count: WEBHOOKS, limit: WEBHOOKS });
  });

  test(`${label}: single geofence creates racing batches end exactly at ${GEOFENCES}`, async () => {
    const token = (await signUp(on(0), 'race-geofence-mixed')).tokens.access_token;
    const singles = Array.from({ length: 40 }, (_v, i) =>
      call(on(i), '/geofences', { token, body: { name: `s${i}`, geometry: square(500 + i) } }),
    );
    const batches = Array.from({ length: 5 }, (_v, b) =>
      call(on(b + 1), '/geofences/batch', { token, body: geofenceBatch(b * 20, 20) }),
    );
    const [singleAnswers, batchAnswers] = await Promise.all([Promise.all(singles), Promise.all(batches)]);
    const counts = tally(singleAnswers, [201, 403]);
    expectQuotaRefusals(singleAnswers, 'geofences', GEOFENCES);
    const fromBatches = batchAnswers.reduce(
      (sum, answer) => sum + expectStatus<BatchAnswer>(answer, 200).created.length,
      0,
    );
    // 140 asked for, 50 allowed: every create sees the one before it, so the count ends at 50.
    assert.equal((counts.get(201) ?? 0) + fromBatches, GEOFENCES);
    assert.deepEqual((await usage(on(1), token)).geofences, { count: GEOFENCES, limit: GEOFENCES });
  });

  test(`${label}: POST /devices racing devices created by ingestion stay within ${DEVICES}`, async () => {
    const token = (await signUp(on(0), 'race-device-mixed')).tokens.access_token;
    const singles = Array.from({ length: 60 }, (_v, i) =>
      call(on(i), '/devices', { token, body: { name: `d${i}`, external_id: `single-${i}` } }),
    );
    const batches = Array.from({ length: 5 }, (_v, b) =>
      call(on(b + 1), '/locations/batch', { token, body: locationBatch(`m${b}`, 20) }),
    );
    const [singleAnswers, batchAnswers] = await Promise.all([Promise.all(singles), Promise.all(batches)]);
    const singleCounts = tally(singleAnswers, [201, 403]);
    const batchCounts = tally(batchAnswers, [200, 403]);
    expectQuotaRefusals(singleAnswers, 'devices', DEVICES);
    expectQuotaRefusals(batchAnswers, 'devices', DEVICES);
    const made = (singleCounts.get(201) ?? 0) + 20 * (batchCounts.get(200) ?? 0);
    const { devices } = await usage(on(1), token);
    assert.equal(devices.count, made, 'every device stored was answered as created');
    assert.ok(devices.count <= DEVICES, `never above the limit: ${devices.count}`);
    // Exact, not just bounded: a refused single means the limit was reached; a refused batch of 20
    // means fewer than 20 places were left.
    if ((singleCounts.get(403) ?? 0) > 0) assert.equal(devices.count, DEVICES);
    if ((batchCounts.get(403) ?? 0) > 0) assert.ok(devices.count > DEVICES - 20, `${devices.count}`);
  });
}

describe('count limits under concurrency, one node', () => {
  let t: TestApp;
  before(async () => {
    t = await startIdentityApp();
  });
  after(async () => {
    await t?.close();
  });
  races('one node', () => [t]);
});

describe('count limits under concurrency, two nodes on one database', () => {
  let shared: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    shared = await createSharedTestDatabase();
    a = await startIdentityApp({ database: shared });
    b = await startIdentityApp({ database: shared });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await shared?.drop();
  });
  races('two nodes', () => [a, b]);
});
