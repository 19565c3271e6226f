/**
 * Crash safety of workflow actions (ADR 014: the mechanics of ADR 010): the real server in a child
 * process, actions pending and in flight at a slow Slack stand-in, SIGKILL, restart on the same
 * database. Every action completes; none is lost; an action's request is repeated only if it had
 * reached the target before the kill (in flight, or answered but not yet recorded). The Slack URL
 * paths are secrets, and the target quotes them back: neither server's output nor any answer holds
 * one.
 *
 * Leases are ten minutes long here, so nothing the killed server leased becomes due by itself
 * during the test: the leases are back-dated in the database while no server runs (as running out
 * would leave them), and the restarted server must take every one of them.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseDatabaseUrl } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import type { TestDatabase } from '../helpers/database.ts';
import { createProcessDatabase, httpCall, spawnServer } from '../helpers/spawned-server.ts';
import { Receiver } from '../webhooks/delivery-helpers.ts';
import type { RunDetailOut, RunOut } from './workflow-helpers.ts';

const CRASH_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s',
  WEBHOOK_LEASE_MARGIN: '10m',
  WEBHOOK_POLL_INTERVAL: '100ms',
  WORKFLOW_ACTION_TIMEOUT: '5s',
  // Few attempts at a time, so the kill finds some done, some in flight and many not started.
  WEBHOOK_CONCURRENCY: '4',
  // Every request and warning in the output that is searched for secrets.
  LOG_LEVEL: 'info',
};

const EVENTS = 20;
/** Two workflows of two Slack actions each; each path's last segment is its credential. */
const SLACK_PATHS = [
  [
    '/services/TCRASH01/BNORTH01/NorthFirstSecretToken0001',
    '/services/TCRASH01/BNORTH02/NorthSecondSecretToken002',
  ],
  [
    '/services/TCRASH01/BSOUTH01/SouthFirstSecretToken0003',
    '/services/TCRASH01/BSOUTH02/SouthSecondSecretToken004',
  ],
];
const TOTAL = EVENTS * SLACK_PATHS.flat().length;

/**
 * Ends at `now` the leases the killed server still holds, as if they had run out (a lease is the
 * action job's `due_at` with `lease_owner` set); returns how many there were.
 */
async function expireLeases(url: string, now: Date): Promise<number> {
  const target = parseDatabaseUrl(url);
  assert.ok(target, `a database URL: ${url}`);
  const handle = openDatabase(target);
  try {
    const result = await handle.db
      .updateTable('workflow_action_runs')
      .set({ due_at: now })
      .where('status', '=', 'pending')
      .where('lease_owner', 'is not', null)
      .where('due_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(result.numUpdatedRows);
  } finally {
    await handle.close();
  }
}

describe('workflow actions survive SIGKILL', () => {
  let database: TestDatabase;
  let dir: string;
  let receiver: Receiver;
  const children: ChildProcess[] = [];
  /** Every answer of either server, to be searched for secrets. */
  const bodies: string[] = [];

  /** One API call that must succeed (any 2xx); its JSON body. */
  async function api<T>(
    base: string,
    method: string,
    url: string,
    token?: string,
    body?: unknown,
  ): Promise<T> {
    const answer = await httpCall<T>(base, method, url, {
      ...(token ? { token } : {}),
      ...(body === undefined ? {} : { body }),
    });
    bodies.push(JSON.stringify(answer.body) ?? '');
    if (answer.status >= 300)
      throw new Error(`${method} ${url} → ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  before(async () => {
    database = await createProcessDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-workflow-crash-'));
    receiver = await Receiver.start();
  });
  after(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await receiver.close();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('kill mid-flight, restart: every action completes, repeated only if in flight', async () => {
    // Slow answers keep attempts in flight; the answer quotes the secret path back.
    receiver.respond = (req) => ({ status: 200, body: `ok ${req.url}`, delayMs: 250 });
    const origin = new URL(receiver.url).origin;
    const first = await spawnServer(database, dir, CRASH_ENV);
    children.push(first.child);
    const email = 'workflow-crash@example.com';
    const password = 'a long password';
    await api(first.base, 'POST', '/auth/register', undefined, { email, password });
    const { access_token: token } = await api<{ access_token: string }>(
      first.base,
      'POST',
      '/auth/login',
      undefined,
      { email, password },
    );
    const yard = await api<{ id: string }>(first.base, 'POST', '/geofences', token, {
      name: 'Yard',
      geometry: { type: 'Circle', coordinates: [10, 50], radius: 100 },
    });
    const workflows: string[] = [];
    for (const [index, paths] of SLACK_PATHS.entries()) {
      const workflow = await api<{ id: string }>(first.base, 'POST', '/workflows', token, {
        name: `flow ${index}`,
        trigger: { geofence_id: yard.id, event_types: ['enter', 'exit'] },
        actions: paths.map((p) => ({
          type: 'slack',
          config: { webhook_url: `${origin}${p}`, message: '{{event_id}}' },
        })),
      });
      workflows.push(workflow.id);
    }
    const base = Date.now() - 3_600_000;
    await api(first.base, 'POST', '/locations/batch', token, {
      locations: Array.from({ length: EVENTS }, (_v, i) => ({
        device_external_id: 'crash-device',
        coordinates: i % 2 === 0 ? [10, 50] : [10.5, 50],
        timestamp: new Date(base + i * 1000).toISOString(),
      })),
    });

    await receiver.waitFor(12);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const killedAt = Date.now();
    const keyOf = (r: { url: string; body: Buffer }) =>
      `${r.url} ${(JSON.parse(r.body.toString('utf8')) as { text: string }).text}`;
    const beforeKill = new Set(receiver.requests.filter((r) => r.realMs < killedAt).map(keyOf));
    assert.ok(beforeKill.size < TOTAL, 'the kill happened mid-way');
    const expired = await expireLeases(database.url, new Date(killedAt));
    assert.ok(expired > 0, 'the kill left actions leased');

    const second = await spawnServer(database, dir, CRASH_ENV);
    children.push(second.child);
    receiver.respond = (req) => ({ status: 200, body: `ok ${req.url}`, delayMs: 5 });
    const runsOf = async (workflowId: string, status?: string) =>
      api<{ results: RunOut[]; pagination: { total: number } }>(
        second.base,
        'GET',
        `/workflows/${workflowId}/runs?limit=100${status ? `&status=${status}` : ''}`,
        token,
      );
    const deadline = Date.now() + 60_000;
    let succeeded = 0;
    while (Date.now() < deadline) {
      succeeded = 0;
      for (const id of workflows) succeeded += (await runsOf(id, 'success')).pagination.total;
      if (succeeded === EVENTS * workflows.length) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(succeeded, EVENTS * workflows.length, `every run succeeded (output: ${second.output()})`);

    // Each action reached the target once, or twice if its request was in flight at the kill.
    const counts = new Map<string, number>();
    for (const r of receiver.requests) counts.set(keyOf(r), (counts.get(keyOf(r)) ?? 0) + 1);
    const expected: string[] = [];
    for (const [index, id] of workflows.entries()) {
      const runs = (await runsOf(id)).results;
      assert.equal(runs.length, EVENTS);
      for (const run of runs) {
        assert.deepEqual(
          run.actions.map((a) => [a.status, a.attempt_count]),
          [
            ['success', 1],
            ['success', 1],
          ],
          'a repeated attempt keeps its number',
        );
        for (const p of SLACK_PATHS[index] ?? []) expected.push(`${p} ${run.event_id}`);
      }
    }
    assert.equal(new Set(expected).size, TOTAL);
    assert.deepEqual([...counts.keys()].sort(), [...expected].sort(), 'every action sent, nothing else');
    const repeated = [...counts].filter(([, n]) => n > 1);
    for (const [key, n] of repeated) {
      assert.equal(n, 2, `${key} sent ${n} times`);
      assert.ok(beforeKill.has(key), `${key} repeated though not sent before the kill`);
    }
    // A repeat is of an attempt still leased at the kill: in flight, or answered but not recorded.
    assert.ok(repeated.length <= expired, `${repeated.length} repeats, ${expired} leases expired`);

    // One run's detail: the excerpt quoted the secret path, which is blanked.
    const [someRun] = (await runsOf(workflows[0] ?? '')).results;
    assert.ok(someRun);
    const detail = await api<RunDetailOut>(
      second.base,
      'GET',
      `/workflows/${workflows[0]}/runs/${someRun.id}`,
      token,
    );
    assert.match(detail.actions[0]?.attempts[0]?.response_excerpt ?? '', /^ok /);
    await api(second.base, 'GET', `/workflows/${workflows[0]}`, token);

    await second.stop();
    const output = first.output() + second.output();
    assert.ok(output.length > 0, 'the servers logged');
    for (const secret of SLACK_PATHS.flat().flatMap((p) => [p, p.split('/').at(-1) ?? p])) {
      assert.ok(!output.includes(secret), `the server output holds ${secret}`);
      for (const body of bodies) assert.ok(!body.includes(secret), `an answer holds ${secret}: ${body}`);
    }
  });
});
