/**
 * Contract §0, faults: two server processes (nodes) on a PostgreSQL of the test's own, under
 * steady location traffic, live through a PostgreSQL restart and a 10-second stop. Neither process
 * ever exits; every answer is 201 or the contract's 503 (never a 500), within 2 s; every location
 * answered 201 is stored and every event it named reaches a signature-checking receiver (and a
 * customer database through a workflow `database` action) exactly once per delivery; afterwards
 * the nodes work again within 2 s, and their cross-node signals (geofence index versions, the live
 * stream over LISTEN/NOTIFY) are back.
 *
 * It brings its own PostgreSQL, so it runs once: in the PostgreSQL run of the suite.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { IS_POSTGRES } from '../helpers/database.ts';
import {
  httpCall,
  httpExpect,
  NO_PLAN_LIMITS,
  type SpawnedServer,
  spawnServer,
} from '../helpers/spawned-server.ts';
import {
  createDatabaseOn,
  startThrowawayPostgres,
  type ThrowawayPostgres,
} from '../helpers/throwaway-services.ts';
import { SseStream } from '../stream/sse-client.ts';
import {
  type Answer,
  assertOnlyStoredOr503,
  eventsAnswered,
  INSIDE,
  LocationTraffic,
  SigningReceiver,
  type StoredAnswer,
} from './traffic.ts';

const DEVICES = 6;
/** Contract §0: an answer within 2 s during an outage, and everything working 2 s after it. */
const BOUND_MS = 2_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Node {
  name: string;
  base: string;
  server: SpawnedServer;
}

describe('PostgreSQL restart and outage under traffic', {
  skip: !IS_POSTGRES && 'brings its own PostgreSQL: runs in the PostgreSQL run',
}, () => {
  let postgres: ThrowawayPostgres;
  let receiver: SigningReceiver;
  let nodes: Node[] = [];
  let dataDir: string;
  let apiKey: string;
  let customerUrl: string;
  let traffic: LocationTraffic;
  let devices: string[];
  const marks: Record<string, number> = {};

  before(async () => {
    postgres = await startThrowawayPostgres();
    const url = await createDatabaseOn(postgres, 'service');
    customerUrl = await createDatabaseOn(postgres, 'customer');
    receiver = await SigningReceiver.start();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-faults-'));
    const env = {
      ...NO_PLAN_LIMITS,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s,2s,4s,8s,8s,8s',
      WEBHOOK_LEASE_MARGIN: '3s',
      WEBHOOK_POLL_INTERVAL: '200ms',
      GEOFENCE_INDEX_CHECK_MS: '200',
    };
    const database = { url, schema: undefined, drop: async () => {} };
    // One after the other: the first runs the migrations.
    for (const name of ['a', 'b']) {
      const server = await spawnServer(database, dataDir, env);
      nodes.push({ name, base: server.base, server });
    }
  });

  after(async () => {
    for (const n of nodes) fs.writeFileSync(`/tmp/fault-node-${n.name}.log`, n.server.output());
    await traffic?.stop();
    await Promise.all(nodes.map((n) => n.server.stop()));
    nodes = [];
    await receiver?.close();
    if (process.env.KEEP_PG) process.stdout.write(`# kept ${postgres.url}\n`);
    else await postgres?.destroy();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const [a, b] = [() => nodes[0] as Node, () => nodes[1] as Node];

  test('setup: a circle, a signed webhook, a database workflow, devices', async () => {
    const email = `faults-${Date.now()}@example.com`;
    const password = 'correct horse battery staple';
    await httpExpect(201, a().base, 'POST', '/auth/register', { body: { email, password } });
    const { access_token: token } = await httpExpect<{ access_token: string }>(
      200,
      a().base,
      'POST',
      '/auth/login',
      {
        body: { email, password },
      },
    );
    apiKey = (
      await httpExpect<{ key: string }>(201, a().base, 'POST', '/account/api-keys', {
        token,
        body: { name: 'faults', scopes: ['*'] },
      })
    ).key;
    const fence = await httpExpect<{ id: string }>(201, a().base, 'POST', '/geofences', {
      apiKey,
      body: { name: 'Depot', geometry: { type: 'Circle', coordinates: INSIDE, radius: 500 } },
    });
    const hook = await httpExpect<{ secret: string }>(201, a().base, 'POST', '/webhooks', {
      apiKey,
      body: {
        name: 'receiver',
        url: receiver.url,
        events: ['geofence.enter', 'geofence.exit'],
        rate_limit_per_minute: 10_000,
      },
    });
    receiver.secrets.push(hook.secret);
    await httpExpect(201, a().base, 'POST', '/workflows', {
      apiKey,
      body: {
        name: 'to the customer database',
        trigger: { geofence_id: fence.id, event_types: ['enter', 'exit'] },
        actions: [{ type: 'database', config: { connection_url: customerUrl, table: 'geofence_events' } }],
      },
    });
    devices = [];
    for (let i = 0; i < DEVICES; i++) {
      const device = await httpExpect<{ id: string }>(201, a().base, 'POST', '/devices', {
        apiKey,
        body: { name: `tracker ${i}` },
      });
      devices.push(device.id);
    }
  });

  test('a restart, then a 10-second stop, under steady traffic', async () => {
    traffic = new LocationTraffic(
      nodes.map((n) => ({ name: n.name, base: n.base })),
      apiKey,
      devices,
    );
    await sleep(2_000);
    marks.restartAt = Date.now();
    await postgres.restart();
    marks.restartedAt = Date.now();
    await sleep(3_000);

    marks.stopAt = Date.now();
    await postgres.stop();
    marks.stoppedAt = Date.now();
    await sleep(1_000);
    const ready = await fetch(`${b().base}/readyz`);
    assert.equal(ready.status, 503, '/readyz says the database is down');
    await sleep(9_000);
    marks.startAt = Date.now();
    await postgres.start();
    marks.startedAt = Date.now();
    await sleep(4_000);
    await traffic.stop();

    for (const node of nodes) assert.equal(node.server.child.exitCode, null, `node ${node.name} is running`);
    assertOnlyStoredOr503(traffic.answers, BOUND_MS);
    const during = traffic.between(marks.stoppedAt as number, marks.startAt as number);
    assert.ok(
      during.length > 0 && during.every((x) => x.status === 503),
      'while stopped, every answer is 503',
    );
    const afterwards = traffic.between((marks.startedAt as number) + BOUND_MS, Date.now());
    assert.ok(afterwards.length > 0, 'traffic went on after the outage');
    assert.deepEqual(
      afterwards.filter((x) => x.status !== 201).map((x) => [x.node, x.status, x.body]),
      [],
      'two seconds after the database is back, every request succeeds',
    );
    assert.equal((await fetch(`${b().base}/readyz`)).status, 200);
    const summary = {
      ...summarise(traffic.answers),
      // From pg_ctl start returning to each node's first stored location.
      recovered_after_ms: Object.fromEntries(
        nodes.map((n) => {
          const first = traffic.answers.find(
            (x) => x.node === n.name && x.status === 201 && x.startedAt >= (marks.startedAt as number),
          );
          return [n.name, first ? first.startedAt + Math.round(first.ms) - (marks.startedAt as number) : -1];
        }),
      ),
    };
    process.stdout.write(`# faults: ${JSON.stringify({ ...summary, marks: relative(marks) })}\n`);
  });

  test('every location answered 201 is stored', async () => {
    const answered = new Map<string, Set<string>>();
    for (const x of traffic.answers) {
      if (x.status !== 201) continue;
      const stored = x.body as StoredAnswer;
      const set = answered.get(x.device) ?? new Set<string>();
      set.add(stored.location.id);
      answered.set(x.device, set);
    }
    for (const [device, ids] of answered) {
      const stored = await locationIds(a().base, apiKey, device);
      const missing = [...ids].filter((id) => !stored.has(id));
      assert.deepEqual(missing, [], `every acknowledged location of ${device} is stored`);
    }
  });

  test('every event an answer named is delivered, signed, none twice; and reaches the customer database', async () => {
    const wanted = eventsAnswered(traffic.answers);
    assert.ok(wanted.size > 20, `the traffic produced events (${wanted.size})`);
    await receiver.waitForAll(wanted, Number(process.env.WAIT_MS ?? 60_000));
    assert.equal(receiver.unsigned, 0, 'every request was signed');
    assert.deepEqual(receiver.duplicates(), [], 'no delivery was sent twice');

    const client = new pg.Client({ connectionString: customerUrl });
    await client.connect();
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const rows = await client
          .query<{ key: string }>(
            `select payload->'data'->>'device_id' || '|' || event_id as key from geofence_events`,
          )
          .catch(() => ({ rows: [] as Array<{ key: string }> }));
        const got = new Set(rows.rows.map((r) => r.key));
        const missing = [...wanted].filter((w) => !got.has(w));
        if (missing.length === 0) break;
        if (Date.now() > deadline)
          assert.fail(`${missing.length} events never reached the customer database`);
        await sleep(250);
      }
    } finally {
      await client.end();
    }
  });

  test('cross-node signals are back: a geofence made on one node is used by the other, the live stream crosses nodes', async () => {
    const stream = await SseStream.connect(a().base, { apiKey });
    try {
      // A new geofence through node a, used by node b's index within its check interval.
      const far: [number, number] = [2.35, 48.85];
      const fence = await httpExpect<{ id: string }>(201, a().base, 'POST', '/geofences', {
        apiKey,
        body: { name: 'After the outage', geometry: { type: 'Circle', coordinates: far, radius: 300 } },
      });
      const device = await httpExpect<{ id: string }>(201, b().base, 'POST', '/devices', {
        apiKey,
        body: { name: 'after' },
      });
      let entered: StoredAnswer['events'][number] | undefined;
      const deadline = Date.now() + 10_000;
      for (let i = 0; !entered; i++) {
        const at = new Date(Date.now() - 60_000 + i * 1000).toISOString();
        const out = await httpExpect<StoredAnswer>(201, b().base, 'POST', `/devices/${device.id}/locations`, {
          apiKey,
          body: { coordinates: i % 2 === 0 ? far : [far[0] + 0.1, far[1]], timestamp: at },
        });
        entered = out.events.find((e) => e.geofence_id === fence.id && e.event_type === 'enter');
        if (Date.now() > deadline) assert.fail('node b never used the geofence made on node a');
      }
      // Node b's event reached node a's stream subscriber over LISTEN/NOTIFY.
      await stream.next(
        (m) => m.event === 'geofence_event' && (m.data as { geofence_id?: string }).geofence_id === fence.id,
        'the event of node b on the stream of node a',
      );
    } finally {
      await stream.close();
    }
    assert.deepEqual(receiver.duplicates(), []);
  });
});

async function locationIds(base: string, apiKey: string, device: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let offset = 0; ; offset += 200) {
    const page = await httpCall<{ results: Array<{ id: string }>; pagination: { has_more: boolean } }>(
      base,
      'GET',
      `/devices/${device}/locations?limit=200&offset=${offset}`,
      { apiKey },
    );
    assert.equal(page.status, 200);
    for (const l of page.body.results) ids.add(l.id);
    if (!page.body.pagination.has_more) return ids;
  }
}

function summarise(answers: readonly Answer[]): Record<string, number> {
  const ms = answers.map((x) => x.ms).sort((p, q) => p - q);
  const at = (q: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0);
  return {
    requests: answers.length,
    stored: answers.filter((x) => x.status === 201).length,
    unavailable: answers.filter((x) => x.status === 503).length,
    p50_ms: at(0.5),
    p99_ms: at(0.99),
    max_ms: at(1),
  };
}

function relative(marks: Record<string, number>): Record<string, number> {
  const first = Math.min(...Object.values(marks));
  return Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, v - first]));
}
