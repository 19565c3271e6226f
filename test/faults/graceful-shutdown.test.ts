/**
 * Contract §0, shutdown: two server processes on one database take steady location traffic while
 * each in turn gets SIGTERM and is replaced by a new process (a rolling restart). Each exits 0
 * within SHUTDOWN_GRACE_SECONDS; no location answered 201 is lost; every event is delivered to
 * each webhook exactly once and every workflow action runs exactly once, although deliveries and
 * actions were claimed and in flight at each SIGTERM. Leases are a minute long here, so a claimed
 * job that a stopping node did not give back would miss the test's deadline.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { TestDatabase } from '../helpers/database.ts';
import { FakeChatServices, SLACK_PATH } from '../helpers/fake-chat-services.ts';
import {
  createProcessDatabase,
  httpExpect,
  NO_PLAN_LIMITS,
  type SpawnedServer,
  spawnServer,
} from '../helpers/spawned-server.ts';
import { eventsAnswered, INSIDE, LocationTraffic, SigningReceiver } from './traffic.ts';

const GRACE_SECONDS = 10;
/** The receiver's answers take this long, and this long around each SIGTERM. */
const RECEIVER_MS = 20;
const SLOW_RECEIVER_MS = 1_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Node {
  name: string;
  base: string;
  server: SpawnedServer;
}

describe('SIGTERM under load: a rolling restart of two nodes', () => {
  let database: TestDatabase;
  let dataDir: string;
  let env: Record<string, string>;
  let receiver: SigningReceiver;
  let chat: FakeChatServices;
  const nodes: Node[] = [];
  let apiKey: string;
  let devices: string[];
  let traffic: LocationTraffic;
  const webhooks: string[] = [];

  before(async () => {
    database = await createProcessDatabase();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-shutdown-'));
    receiver = await SigningReceiver.start();
    receiver.delayMs = RECEIVER_MS;
    chat = await FakeChatServices.start();
    env = {
      ...NO_PLAN_LIMITS,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s',
      WEBHOOK_POLL_INTERVAL: '200ms',
      WEBHOOK_LEASE_MARGIN: '60s',
      SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
      // The workers' shutdown lines (what was in flight, what was given back) are info.
      LOG_LEVEL: 'info',
    };
    for (const name of ['a', 'b']) nodes.push(await start(name));
  });

  after(async () => {
    await traffic?.stop();
    await Promise.all(nodes.map((n) => n.server.stop()));
    await receiver?.close();
    await chat?.close();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function start(name: string): Promise<Node> {
    const server = await spawnServer(database, dataDir, env);
    return { name, base: server.base, server };
  }

  test('setup: a circle, two signed webhooks, a Slack workflow, devices', async () => {
    const base = (nodes[0] as Node).base;
    const email = `shutdown-${Date.now()}@example.com`;
    const password = 'correct horse battery staple';
    await httpExpect(201, base, 'POST', '/auth/register', { body: { email, password } });
    const { access_token: token } = await httpExpect<{ access_token: string }>(
      200,
      base,
      'POST',
      '/auth/login',
      {
        body: { email, password },
      },
    );
    apiKey = (
      await httpExpect<{ key: string }>(201, base, 'POST', '/account/api-keys', {
        token,
        body: { name: 'shutdown', scopes: ['*'] },
      })
    ).key;
    const fence = await httpExpect<{ id: string }>(201, base, 'POST', '/geofences', {
      apiKey,
      body: { name: 'Depot', geometry: { type: 'Circle', coordinates: INSIDE, radius: 500 } },
    });
    // Two webhooks: each has its own chain of deliveries on each node, so more are in flight.
    for (const name of ['first', 'second']) {
      const hook = await httpExpect<{ id: string; secret: string }>(201, base, 'POST', '/webhooks', {
        apiKey,
        body: { name, url: receiver.url, rate_limit_per_minute: 10_000 },
      });
      webhooks.push(hook.id);
      receiver.secrets.push(hook.secret);
    }
    await httpExpect(201, base, 'POST', '/workflows', {
      apiKey,
      body: {
        name: 'to Slack',
        trigger: { geofence_id: fence.id, event_types: ['enter', 'exit'] },
        actions: [
          {
            type: 'slack',
            config: { webhook_url: chat.url(SLACK_PATH), message: '{{device.id}}|{{event_id}}' },
          },
        ],
      },
    });
    devices = [];
    for (let i = 0; i < 4; i++) {
      devices.push(
        (await httpExpect<{ id: string }>(201, base, 'POST', '/devices', { apiKey, body: { name: `t${i}` } }))
          .id,
      );
    }
  });

  test('each node in turn gets SIGTERM and a successor; nothing acknowledged is lost, nothing sent twice', async () => {
    traffic = new LocationTraffic(() => nodes, apiKey, devices, { pauseMs: 100 });
    // The successors are stopped by this test too: a process it started must not outlive it.
    const successors: Node[] = [];
    const stops: Array<{ msg: string; given_back: number; in_flight: number }> = [];
    try {
      await sleep(2_000);
      for (const index of [0, 1]) {
        const old = nodes[index] as Node;
        // The receiver holds its answers for a while, so that the node surely has attempts in
        // flight and claimed deliveries waiting behind them when it is told to stop.
        receiver.delayMs = SLOW_RECEIVER_MS;
        await sleep(SLOW_RECEIVER_MS / 2);
        const started = Date.now();
        await old.server.stop();
        const took = Date.now() - started;
        receiver.delayMs = RECEIVER_MS;
        assert.equal(
          old.server.child.exitCode,
          0,
          `node ${old.name} exits 0: ${old.server.output().slice(-2000)}`,
        );
        assert.ok(
          took < GRACE_SECONDS * 1000,
          `node ${old.name} stopped within the grace period (${took} ms)`,
        );
        stops.push(...shutdownLines(old.server.output()));
        const next = await start(`${old.name}2`);
        successors.push(next);
        nodes[index] = next;
        await sleep(2_000);
      }
      await traffic.stop();
      process.stdout.write(`# worker shutdowns: ${JSON.stringify(stops)}\n`);
      // The premise: each stopping node had deliveries in flight when told to stop.
      const deliveryStops = stops.filter((s) => s.msg.startsWith('delivery worker'));
      assert.equal(deliveryStops.length, 2, 'both nodes said how their delivery worker stopped');
      assert.ok(
        deliveryStops.every((s) => s.in_flight > 0),
        'each node had deliveries in flight when it was stopped',
      );
      const statuses = new Set(traffic.answers.map((a) => a.status));
      for (const status of statuses) {
        // 0: a request to the stopped node found nobody listening; 503: it arrived while closing.
        assert.ok(
          [0, 201, 503].includes(status),
          `no answer other than 201, 503 or no connection (got ${status})`,
        );
      }
      await assertNothingLost();
      await assertEachOnce();
    } finally {
      await traffic.stop();
      await Promise.all(successors.map((n) => n.server.stop()));
    }
  });

  /** The workers' own account of their shutdown, from a node's log. */
  function shutdownLines(output: string): Array<{ msg: string; given_back: number; in_flight: number }> {
    return output
      .split('\n')
      .filter((line) => line.includes('"given_back"'))
      .map((line) => JSON.parse(line) as { msg: string; given_back: number; in_flight: number })
      .map(({ msg, given_back, in_flight }) => ({ msg, given_back, in_flight }));
  }

  async function assertNothingLost(): Promise<void> {
    const base = (nodes[0] as Node).base;
    for (const device of devices) {
      const acknowledged = traffic.answers.filter((a) => a.device === device && a.status === 201);
      const stored = await httpExpect<{ pagination: { total: number } }>(
        200,
        base,
        'GET',
        `/devices/${device}/locations?limit=1`,
        { apiKey },
      );
      assert.ok(acknowledged.length > 10, 'the device was tracked throughout');
      assert.equal(
        stored.pagination.total,
        acknowledged.length,
        `every acknowledged location of ${device} is stored`,
      );
    }
  }

  /** Every event reaches each webhook once and runs the workflow action once. */
  async function assertEachOnce(): Promise<void> {
    const wanted = eventsAnswered(traffic.answers);
    assert.ok(wanted.size > 30, `the traffic produced events (${wanted.size})`);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const perEvent = new Map<string, number>();
      for (const d of receiver.deliveries) {
        const key = `${d.deviceId}|${d.eventId}`;
        perEvent.set(key, (perEvent.get(key) ?? 0) + 1);
      }
      const slack = new Set(chat.accepted('slack').map((r) => (r.json as { text: string }).text));
      const waiting = [...wanted].filter((w) => (perEvent.get(w) ?? 0) < webhooks.length || !slack.has(w));
      if (waiting.length === 0) break;
      if (Date.now() > deadline) {
        assert.fail(
          `${waiting.length} of ${wanted.size} events not yet delivered to both webhooks and Slack`,
        );
      }
      await sleep(200);
    }
    assert.equal(receiver.unsigned, 0, 'every delivery was signed');
    assert.deepEqual(receiver.duplicates(), [], 'no delivery was sent twice');
    const texts = chat.accepted('slack').map((r) => (r.json as { text: string }).text);
    assert.equal(new Set(texts).size, texts.length, 'no workflow action ran twice');
  }
});
