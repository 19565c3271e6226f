/**
 * Two workflow workers on one database (like two nodes): they claim disjoint action jobs (SKIP
 * LOCKED and leases on PostgreSQL, the single writer on SQLite), so no attempt is ever made twice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { Dispatcher } from 'undici';
import {
  createActionRuntime,
  createActionWorker,
  createDeliveryDispatcher,
  drainOutbox,
} from '../../src/engine.ts';
import type { ActionWorker } from '../../src/workflows/action-worker.ts';
import type { ActionRuntime } from '../../src/workflows/actions/action.ts';
import { circle, createGeofence } from '../geofences/helpers.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { createSharedTestDatabase, IS_POSTGRES } from '../helpers/database.ts';
import { produceEvents, Receiver } from '../webhooks/delivery-helpers.ts';
import { createWorkflow, startWorkflowHarness, type WorkflowHarness } from './workflow-helpers.ts';

const EVENTS = 50;
const WORKFLOWS = ['north', 'south'];
/** Two actions per workflow and event: 200 action jobs over 100 runs. */
const ACTIONS = EVENTS * WORKFLOWS.length * 2;

describe('two workflow workers on one database', () => {
  let h: WorkflowHarness;
  let second: TestApp;
  let workers: ActionWorker[];
  let receiver: Receiver;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    const database = await createSharedTestDatabase();
    h = await startWorkflowHarness({ database });
    // A second node: its own pool, runtime and worker, the same database and clock. On SQLite both
    // workers share the first app's connection: two connections of one process would block each
    // other's synchronous BEGIN IMMEDIATE (separate processes wait on the busy timeout).
    second = await startTestApp({ database, clock: h.t.clock });
    const secondDeps = IS_POSTGRES ? second.deps : h.t.deps;
    const dispatcher: Dispatcher = createDeliveryDispatcher(secondDeps);
    const runtime: ActionRuntime = createActionRuntime(secondDeps, dispatcher);
    closers.push(
      () => runtime.databases.close(),
      () => dispatcher.close(),
    );
    workers = [
      createActionWorker(h.t.deps, h.runtime, { batchSize: 15 }),
      createActionWorker(secondDeps, runtime, { batchSize: 15 }),
    ];
    // Slow enough that the two workers' rounds overlap.
    receiver = await Receiver.start(
      () => h.t.clock.now().getTime(),
      () => ({ status: 200, delayMs: 2 }),
    );
  });
  after(async () => {
    for (const w of workers) await w.stop();
    for (const close of closers) await close();
    await second.close();
    await h.close();
    await h.t.database.drop();
    await receiver.close();
  });

  test(`${ACTIONS} actions claimed concurrently: each attempted exactly once`, async () => {
    const gate = await createGeofence(
      h.t,
      { token: h.token },
      { name: 'Gate', geometry: circle(5, 45, 100) },
    );
    for (const name of WORKFLOWS) {
      await createWorkflow(h, {
        name,
        trigger: { geofence_id: gate.id, event_types: ['enter', 'exit'] },
        actions: [
          {
            type: 'slack',
            config: {
              webhook_url: `${receiver.url}/slack/${name}`,
              message: '{{workflow.name}} {{event_id}}',
            },
          },
          {
            type: 'discord',
            config: {
              webhook_url: `${receiver.url}/discord/${name}`,
              message: '{{workflow.name}} {{event_id}}',
            },
          },
        ],
      });
    }
    await produceEvents(h, EVENTS);
    assert.equal((await drainOutbox(h.t.deps)).runs, EVENTS * WORKFLOWS.length);

    const attemptedBy = [0, 0];
    for (let round = 0; round < 200 && receiver.requests.length < ACTIONS; round++) {
      const counts = await Promise.all(workers.map((w) => w.runOnce()));
      counts.forEach((n, i) => {
        attemptedBy[i] = (attemptedBy[i] ?? 0) + n;
      });
    }
    // One more round each: nothing is left, and nothing is made again.
    assert.deepEqual(await Promise.all(workers.map((w) => w.runOnce())), [0, 0]);

    assert.equal(receiver.requests.length, ACTIONS);
    const keys = receiver.requests.map((r) => {
      const body = JSON.parse(r.body.toString('utf8')) as { text?: string; content?: string };
      return `${r.url} ${body.text ?? body.content}`;
    });
    assert.equal(new Set(keys).size, ACTIONS, 'no action attempted twice');
    assert.equal(
      (attemptedBy[0] ?? 0) + (attemptedBy[1] ?? 0),
      ACTIONS,
      `attempts counted by the workers: ${attemptedBy.join(' / ')}`,
    );
    assert.ok(
      (attemptedBy[0] ?? 0) > 0 && (attemptedBy[1] ?? 0) > 0,
      `both worked: ${attemptedBy.join(' / ')}`,
    );

    const db = h.t.deps.database.db;
    // Each attempt ended its action: it is kept on the action's row, with no attempt row (ADR 020).
    const attempts = await sql<{ n: number }>`select count(*) as n from workflow_action_attempts`.execute(db);
    assert.equal(Number(attempts.rows[0]?.n), 0, 'no attempt row for an attempt that ended its action');
    const ended = await sql<{ n: number }>`select count(*) as n from workflow_action_runs
        where started_at is not null and duration_ms is not null`.execute(db);
    assert.equal(Number(ended.rows[0]?.n), ACTIONS, 'the ending attempt of every action on its row');
    const states = await sql<{ status: string; attempt_count: number; n: number }>`select status,
        attempt_count, count(*) as n from workflow_action_runs group by status, attempt_count`.execute(db);
    assert.deepEqual(
      states.rows.map((r) => [r.status, Number(r.attempt_count), Number(r.n)]),
      [['success', 1, ACTIONS]],
    );
    const runs = await sql<{ status: string; n: number }>`select status, count(*) as n
        from workflow_runs group by status`.execute(db);
    assert.deepEqual(
      runs.rows.map((r) => [r.status, Number(r.n)]),
      [['success', EVENTS * WORKFLOWS.length]],
    );
  });
});
