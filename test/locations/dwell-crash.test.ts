/**
 * Dwell timers are durable (contract §4.5): the real server in a child process, devices inside
 * geofences with `dwell_seconds` 60, SIGKILL while their timers are pending, restart on the same
 * database. Every visit gets exactly one dwell event: the overdue ones at once, later ones at their
 * own moment (never before it), also when the restarted server is killed again as soon as it is up.
 *
 * The timers are made due by back-dating `dwell_due_at` while no server runs (as delivery-crash
 * back-dates leases), not by waiting a minute. The poll interval is ten minutes, so a dwell fired
 * within the test was fired by the worker's start-up round or by its wake-up at the next due
 * moment, not by a poll. Servers run on the real clock; the test waits for answers, never for time.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseDatabaseUrl } from '../../src/config.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import type { TestDatabase } from '../helpers/database.ts';
import {
  apiKeyFor,
  createProcessDatabase,
  httpExpect,
  NO_PLAN_LIMITS,
  type SpawnedServer,
  spawnServer,
} from '../helpers/spawned-server.ts';
import type { BatchOut, EventOut } from './helpers.ts';

const ENV = { ...NO_PLAN_LIMITS, WEBHOOK_POLL_INTERVAL: '10m' };
const WORKSPACES = 3;
const DEVICES = 100;
const SOON = 10;
const DEPOT = [10, 50];

async function withDatabase<T>(url: string, body: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  const target = parseDatabaseUrl(url);
  assert.ok(target, `a database URL: ${url}`);
  const handle = openDatabase(target);
  try {
    return await body(handle);
  } finally {
    await handle.close();
  }
}

/** Pending dwell timers, as the killed server left them. */
async function pendingTimers(url: string): Promise<number> {
  return withDatabase(url, async ({ db }) => {
    const row = await db
      .selectFrom('geofence_presence')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('dwelled_at', 'is', null)
      .where('dwell_due_at', 'is not', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  });
}

/** Dwell events stored, read while no server runs. */
async function storedDwells(url: string): Promise<number> {
  return withDatabase(url, async ({ db }) => {
    const row = await db
      .selectFrom('geofence_events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('event_type', '=', 'dwell')
      .executeTakeFirstOrThrow();
    return Number(row.n);
  });
}

/**
 * Back-dates every pending timer to `overdue`, except those of devices whose external id starts
 * with `soon-`, which come due at `soon`.
 */
async function backDate(url: string, overdue: Date, soon: Date): Promise<void> {
  await withDatabase(url, async ({ db }) => {
    await db
      .updateTable('geofence_presence')
      .set({ dwell_due_at: overdue })
      .where('dwelled_at', 'is', null)
      .where('dwell_due_at', 'is not', null)
      .execute();
    await db
      .updateTable('geofence_presence')
      .set({ dwell_due_at: soon })
      .where('dwelled_at', 'is', null)
      .where('device_id', 'in', db.selectFrom('devices').select('id').where('external_id', 'like', 'soon-%'))
      .execute();
  });
}

async function kill(server: SpawnedServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGKILL');
  await exited;
}

async function dwellsOf(base: string, apiKey: string): Promise<EventOut[]> {
  const out: EventOut[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await httpExpect<{ results: EventOut[]; pagination: { has_more: boolean } }>(
      200,
      base,
      'GET',
      `/events?event_type=dwell&limit=200&offset=${offset}`,
      { apiKey },
    );
    out.push(...page.results);
    if (!page.pagination.has_more) return out;
  }
}

/** Polls until `done` holds of the workspaces' dwell events (or a minute passes), returns them. */
async function waitForDwells(
  server: SpawnedServer,
  keys: readonly string[],
  done: (perWorkspace: EventOut[][]) => boolean,
): Promise<EventOut[][]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const perWorkspace = await Promise.all(keys.map((k) => dwellsOf(server.base, k)));
    if (done(perWorkspace) || Date.now() > deadline) return perWorkspace;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('dwell timers survive SIGKILL (contract §4.5)', () => {
  let database: TestDatabase;
  let dir: string;
  const children: ChildProcess[] = [];

  before(async () => {
    database = await createProcessDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-dwell-crash-'));
  });
  after(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await database?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function start(): Promise<SpawnedServer> {
    const server = await spawnServer(database, dir, ENV);
    children.push(server.child);
    return server;
  }

  test('killed with timers pending, restarted (and killed again at once): one dwell per visit', async () => {
    const first = await start();
    const keys: string[] = [];
    const fences: string[] = [];
    const enteredAt = Date.now();
    for (let w = 0; w < WORKSPACES; w++) {
      const apiKey = await apiKeyFor(first.base, `dwell-crash-${w}`);
      keys.push(apiKey);
      const fence = await httpExpect<{ id: string }>(201, first.base, 'POST', '/geofences', {
        apiKey,
        body: {
          name: 'Yard',
          geometry: { type: 'Circle', coordinates: DEPOT, radius: 100 },
          dwell_seconds: 60,
        },
      });
      fences.push(fence.id);
      const externalIds = Array.from({ length: DEVICES }, (_v, i) => `truck-${i}`);
      if (w === 0) for (let i = 0; i < SOON; i++) externalIds.push(`soon-${i}`);
      const batch = await httpExpect<BatchOut>(200, first.base, 'POST', '/locations/batch', {
        apiKey,
        body: {
          locations: externalIds.map((id) => ({
            device_external_id: id,
            coordinates: DEPOT,
            timestamp: new Date(enteredAt).toISOString(),
          })),
        },
      });
      assert.equal(batch.events.length, externalIds.length, 'one enter each');
    }
    const visits = WORKSPACES * DEVICES + SOON;
    await kill(first);
    assert.equal(await pendingTimers(database.url), visits, 'every timer pending at the kill');

    // While no server runs: the visits' dwell moments pass (one stays a few seconds ahead).
    const overdue = new Date(Date.now() - 5 * 60_000);
    const soon = new Date(Date.now() + 20_000);
    await backDate(database.url, overdue, soon);

    // The restarted server fires the overdue dwells at start (its worker starts before it answers
    // /healthz); it is killed again the moment it is up: before, while or after it fires them,
    // whichever it is, the next start must neither lose nor repeat one.
    const second = await start();
    await kill(second);
    const firedBeforeKill = await storedDwells(database.url);

    // A third start finishes the work; nothing is fired twice.
    const third = await start();
    const final = await waitForDwells(third, keys, (p) => p.flat().length >= visits);
    assert.equal(
      final.flat().length,
      visits,
      `one dwell per visit (${firedBeforeKill} before the second kill): ${third.output()}`,
    );
    for (const [w, events] of final.entries()) {
      const perDevice = new Map<string, EventOut[]>();
      for (const e of events) perDevice.set(e.device_id, [...(perDevice.get(e.device_id) ?? []), e]);
      assert.equal(perDevice.size, events.length, `workspace ${w}: no device has two dwell events`);
      assert.equal(events.length, DEVICES + (w === 0 ? SOON : 0), `workspace ${w}: every visit dwelt`);
      const moments = new Map<string, number>();
      for (const e of events) moments.set(e.occurred_at, (moments.get(e.occurred_at) ?? 0) + 1);
      assert.deepEqual(
        Object.fromEntries(moments),
        w === 0
          ? { [overdue.toISOString()]: DEVICES, [soon.toISOString()]: SOON }
          : { [overdue.toISOString()]: DEVICES },
        `workspace ${w}: each at its (back-dated) dwell moment`,
      );
      for (const e of events) {
        assert.ok(e.created_at >= e.occurred_at, `fired at or after its moment: ${JSON.stringify(e)}`);
        assert.equal(e.event_id, `${fences[w]}_dwell_${Math.floor(Date.parse(e.occurred_at) / 1000)}`);
        assert.deepEqual(e.point.coordinates, DEPOT);
      }
    }
    assert.equal(await pendingTimers(database.url), 0, 'no timer left pending');

    // A new visit on the running server: its timer (stored already due, the location being older
    // than dwell_seconds) wakes the worker, which fires it alone.
    const late = await httpExpect<{ id: string }>(201, third.base, 'POST', '/devices', {
      apiKey: keys[1],
      body: { name: 'late' },
    });
    await httpExpect(201, third.base, 'POST', `/devices/${late.id}/locations`, {
      apiKey: keys[1],
      body: { coordinates: DEPOT, timestamp: new Date(Date.now() - 61_000).toISOString() },
    });
    const withLate = await waitForDwells(third, keys, (p) => p.flat().length > visits);
    assert.equal(withLate.flat().length, visits + 1, 'the new visit dwelt once, the others not again');
    assert.equal(withLate[1]?.filter((e) => e.device_id === late.id).length, 1);
    await third.stop();
  });
});
