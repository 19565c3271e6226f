/**
 * Count limits across server processes (contract §7): two `node src/server.ts` processes on one
 * database — a SQLite file shared by two processes, or one PostgreSQL database — take racing creates
 * of one workspace over real HTTP, and the count still ends exactly at the free plan's limit. Each
 * process has its own pool, caches and event loop: only the database can keep the count.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_PLANS } from '../../src/billing/plans.ts';
import type { TestDatabase } from '../helpers/database.ts';
import {
  type ApiAnswer,
  createProcessDatabase,
  httpCall,
  httpExpect,
  type SpawnedServer,
  spawnServer,
} from '../helpers/spawned-server.ts';

const FREE = DEFAULT_PLANS.find((p) => p.id === 'free')?.limits;

interface Usage {
  geofences: { count: number };
  webhooks: { count: number };
  devices: { count: number };
}

interface ErrorAnswer {
  error_code?: string;
  details?: { resource?: string; limit?: number };
}

/** Signs up on `base` (free plan) and returns an access token: JWT requests are not rate limited. */
async function tokenFor(base: string, label: string): Promise<string> {
  const email = `${label}-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const password = 'correct horse battery staple';
  await httpExpect(201, base, 'POST', '/auth/register', { body: { email, password } });
  const pair = await httpExpect<{ access_token: string }>(200, base, 'POST', '/auth/login', {
    body: { email, password },
  });
  return pair.access_token;
}

function statuses(answers: Array<ApiAnswer<unknown>>): Record<number, number> {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}

function expectQuotaRefusals(answers: Array<ApiAnswer<unknown>>, resource: string): void {
  for (const answer of answers) {
    if (answer.status !== 403) continue;
    const body = answer.body as ErrorAnswer;
    assert.equal(body.error_code, 'QUOTA_EXCEEDED', JSON.stringify(body));
    assert.equal(body.details?.resource, resource);
  }
}

describe('count limits across two server processes on one database', () => {
  let shared: TestDatabase;
  let dir: string;
  let nodes: SpawnedServer[] = [];

  before(async () => {
    shared = await createProcessDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-count-limits-'));
    // One after the other: the first applies the migrations, the second finds them applied.
    nodes.push(await spawnServer(shared, dir));
    nodes.push(await spawnServer(shared, dir));
  });
  after(async () => {
    for (const node of nodes) await node.stop();
    nodes = [];
    await shared?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const base = (i: number): string => (nodes[i % nodes.length] as SpawnedServer).base;

  test('100 webhooks, 10 geofence batches and 10 device-creating batches at once: exactly the limits', async () => {
    const token = await tokenFor(base(0), 'count-processes');
    const webhooks = Array.from({ length: 100 }, (_v, i) =>
      httpCall(base(i), 'POST', '/webhooks', {
        token,
        body: { name: `h${i}`, url: 'https://hooks.example/h' },
      }),
    );
    const geofenceBatches = Array.from({ length: 10 }, (_v, b) =>
      httpCall<{ created: unknown[]; rejected: ErrorAnswer[] }>(base(b), 'POST', '/geofences/batch', {
        token,
        body: {
          geofences: Array.from({ length: 50 }, (_w, i) => ({
            name: `g${b}-${i}`,
            geometry: { type: 'Circle', coordinates: [b, i / 10], radius: 100 },
          })),
        },
      }),
    );
    const locationBatches = Array.from({ length: 10 }, (_v, b) =>
      httpCall(base(b + 1), 'POST', '/locations/batch', {
        token,
        body: {
          locations: Array.from({ length: 15 }, (_w, i) => ({
            device_external_id: `p${b}-${i}`,
            coordinates: [20 + i / 100, 40],
          })),
        },
      }),
    );
    const [hooks, fences, locations] = await Promise.all([
      Promise.all(webhooks),
      Promise.all(geofenceBatches),
      Promise.all(locationBatches),
    ]);

    assert.deepEqual(statuses(hooks), { 201: FREE?.webhooks, 403: 100 - (FREE?.webhooks ?? 0) });
    expectQuotaRefusals(hooks, 'webhooks');
    let created = 0;
    for (const answer of fences) {
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      created += answer.body.created.length;
      for (const r of answer.body.rejected) assert.equal(r.error_code, 'QUOTA_EXCEEDED');
    }
    assert.equal(created, FREE?.geofences);
    // 15 new devices a batch: 6 fit under 100, a 7th would make 105.
    assert.deepEqual(statuses(locations), { 200: 6, 403: 4 });
    expectQuotaRefusals(locations, 'devices');

    const usage = await httpExpect<Usage>(200, base(1), 'GET', '/subscriptions/usage', { token });
    assert.equal(usage.webhooks.count, FREE?.webhooks);
    assert.equal(usage.geofences.count, FREE?.geofences);
    assert.equal(usage.devices.count, 90);
  });
});
