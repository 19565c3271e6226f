/**
 * A SIGKILL during a history merge loses and duplicates nothing (ADR 008, "The staged history"):
 * a server stages 8,000 locations of 160 devices, received as single posts 64 at a time (which it
 * groups and stages; a batch would not be staged), without merging them (RUN_WORKER=false: no job
 * engine, so no merge), then a merge runs in a child process of its own (test/fixtures/merge-child.ts)
 * in chunks of 100 rows and is killed with SIGKILL part-way, three times at different points.
 *
 * After each kill, whatever the moment of it: every location is in exactly one of `locations` and
 * `locations_staged`, no id twice, and every device's history and the device list answer exactly
 * as before any merge. A merge left to finish then empties the staged table, the same again.
 *
 * On SQLite the processes share a temporary database file, on PostgreSQL a fresh database. The
 * child prints a line once each chunk has committed, so the kill comes mid-merge; where it lands
 * (inside a chunk or between two) is chance, and every assertion holds wherever it lands.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { parseDatabaseUrl } from '../../src/config.ts';
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts';
import { mergeStagedLocations } from '../../src/locations/history-merge.ts';
import { IS_POSTGRES, type TestDatabase } from '../helpers/database.ts';
import {
  apiKeyFor,
  createProcessDatabase,
  httpExpect,
  NO_PLAN_LIMITS,
  type SpawnedServer,
  spawnServer,
} from '../helpers/spawned-server.ts';
import type { DeviceOut, LocationOut } from './helpers.ts';

const DEVICES = 160;
const STEPS = 50;
const TOTAL = DEVICES * STEPS;
/** Single posts in flight at once: the server gathers them into groups. */
const IN_FLIGHT = 64;
const CHUNK_ROWS = 100;
/** Committed chunks after which each child is killed: early, middle, later (of 80 in all). */
const KILL_AFTER_CHUNKS = [2, 15, 40];
/** History page size: two pages per device (40 and 10). */
const PAGE = 40;
const START = Date.parse('2026-01-05T08:00:00.000Z');
const CHILD = path.join(import.meta.dirname, '..', 'fixtures', 'merge-child.ts');
/** Names the child's PostgreSQL connections, to wait for a killed child's statement to end. */
const CHILD_APPLICATION = 'history-merge-child';
const ENV = {
  ...NO_PLAN_LIMITS,
  RUN_WORKER: 'false',
  // Belt and braces: were the engine running, it would still not merge within the test.
  HISTORY_MERGE_INTERVAL: '1h',
  HISTORY_MERGE_ROWS: '10000000',
};

interface Page<T> {
  results: T[];
  pagination: { total: number; limit: number; offset: number; has_more: boolean };
}

/** Everything the API answers about the devices and their histories, page by page. */
interface Answers {
  devices: Array<Page<DeviceOut>>;
  histories: Record<string, Array<Page<LocationOut>>>;
}

/**
 * The body of step `step` of device `d`. Neighbouring steps swap their timestamps (and are posted
 * a device count apart), so some locations arrive out of order; every column is set on some rows.
 */
function item(d: number, step: number): Record<string, unknown> {
  const moment = step % 2 === 0 ? step + 1 : step - 1;
  return {
    coordinates: [d * 0.001, 10 + step * 0.0001],
    timestamp: new Date(START + moment * 1000).toISOString(),
    ...(step % 3 === 0 ? { accuracy: 5 + (step % 7), speed: 12.5, heading: (d * 7) % 360 } : {}),
    ...(step % 5 === 0 ? { altitude: 100 + d, metadata: { step, device: d } } : {}),
  };
}

/** Runs `work` over `items`, `width` at a time. */
async function inParallel<T>(items: readonly T[], width: number, work: (x: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

async function pages<T>(base: string, apiKey: string, route: string, limit: number): Promise<Array<Page<T>>> {
  const out: Array<Page<T>> = [];
  for (let offset = 0; ; offset += limit) {
    const page = await httpExpect<Page<T>>(200, base, 'GET', `${route}?limit=${limit}&offset=${offset}`, {
      apiKey,
    });
    out.push(page);
    if (!page.pagination.has_more) return out;
  }
}

async function readAnswers(base: string, apiKey: string): Promise<Answers> {
  const devices = await pages<DeviceOut>(base, apiKey, '/devices', 200);
  const ids = devices.flatMap((p) => p.results.map((d) => d.id)).sort();
  const histories: Answers['histories'] = {};
  await inParallel(ids, 8, async (id) => {
    histories[id] = await pages<LocationOut>(base, apiKey, `/devices/${id}/locations`, PAGE);
  });
  return { devices, histories: Object.fromEntries(Object.entries(histories).sort()) };
}

/** The ids in both tables, read in one statement (one snapshot: no row seen moving twice). */
async function storedIds(handle: DatabaseHandle): Promise<{ merged: string[]; staged: string[] }> {
  const { rows } = await sql<{ id: string; staged: number }>`
    select id, 0 as staged from locations
    union all
    select id, 1 as staged from locations_staged`.execute(handle.db);
  return {
    merged: rows.filter((r) => Number(r.staged) === 0).map((r) => r.id),
    staged: rows.filter((r) => Number(r.staged) === 1).map((r) => r.id),
  };
}

describe('a SIGKILL during a history merge loses and duplicates nothing', () => {
  let database: TestDatabase;
  let dir: string;
  let server: SpawnedServer | undefined;
  let handle: DatabaseHandle | undefined;
  const children: ChildProcess[] = [];

  before(async () => {
    database = await createProcessDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-merge-crash-'));
    server = await spawnServer(database, dir, ENV);
    const target = parseDatabaseUrl(database.url);
    assert.ok(target, `a database URL: ${database.url}`);
    handle = openDatabase(target);
  });
  after(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.stop();
    await handle?.close();
    await database?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The database as the child opens it: on PostgreSQL its connections carry a name of their own. */
  function childDatabaseUrl(): string {
    if (!IS_POSTGRES) return database.url;
    const url = new URL(database.url);
    url.searchParams.set('application_name', CHILD_APPLICATION);
    return url.toString();
  }

  /**
   * Starts a merge in a child and kills it with SIGKILL once it has reported `killAfter` committed
   * chunks (it may have finished by then: nothing is asserted of which). Returns the chunks it
   * reported: at least that many are in the database.
   */
  async function mergeKilledAfter(killAfter: number): Promise<{ chunks: number; output: string }> {
    const child = spawn(process.execPath, [CHILD], {
      env: { ...process.env, DATABASE_URL: childDatabaseUrl(), CHUNK_ROWS: String(CHUNK_ROWS) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let chunks = 0;
    let output = '';
    let pending = '';
    child.stdout.on('data', (data: Buffer) => {
      output += data.toString();
      pending += data.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line !== 'chunk') continue;
        chunks++;
        if (chunks === killAfter) child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (data: Buffer) => {
      output += data.toString();
    });
    // 'close': the process has exited and its output is read to the end.
    await new Promise((resolve) => child.once('close', resolve));
    assert.ok(
      child.signalCode === 'SIGKILL' || child.exitCode === 0,
      `the child was killed or finished, nothing else: ${child.exitCode} ${child.signalCode}: ${output}`,
    );
    return { chunks, output };
  }

  /**
   * On PostgreSQL a killed client's statement runs on to its end (then commits or not, atomically).
   * The final merge waits for it: rows it still holds are skipped (`SKIP LOCKED`), not merged.
   */
  async function childStatementsEnded(): Promise<void> {
    if (!IS_POSTGRES || !handle) return;
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where application_name = ${CHILD_APPLICATION} and datname = current_database()`.execute(handle.db);
      if (Number(rows[0]?.n ?? 0) === 0) return;
      assert.ok(Date.now() < deadline, 'the killed children’s statements end');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('killed at three points of a merge, then left to finish: every location once, same answers', {
    timeout: 600_000,
  }, async () => {
    const db = handle;
    assert.ok(server && db, 'set up');
    const base = server.base;
    const apiKey = await apiKeyFor(base, 'merge-crash');

    const deviceIds: string[] = [];
    for (let d = 0; d < DEVICES; d += IN_FLIGHT) {
      const created = await Promise.all(
        Array.from({ length: Math.min(IN_FLIGHT, DEVICES - d) }, (_, k) =>
          httpExpect<DeviceOut>(201, base, 'POST', '/devices', {
            apiKey,
            body: { name: `truck ${d + k}`, external_id: `truck-${d + k}` },
          }),
        ),
      );
      deviceIds.push(...created.map((device) => device.id));
    }
    // Step-major, IN_FLIGHT single posts at a time: each group names many devices, as in production.
    const posts: Array<{ d: number; step: number }> = [];
    for (let step = 0; step < STEPS; step++) for (let d = 0; d < DEVICES; d++) posts.push({ d, step });
    for (let i = 0; i < posts.length; i += IN_FLIGHT) {
      await Promise.all(
        posts.slice(i, i + IN_FLIGHT).map(({ d, step }) =>
          httpExpect<{ location: LocationOut }>(201, base, 'POST', `/devices/${deviceIds[d]}/locations`, {
            apiKey,
            body: item(d, step),
          }),
        ),
      );
    }

    const reference = await readAnswers(base, apiKey);
    const deviceCount = reference.devices.reduce((n, p) => n + p.results.length, 0);
    assert.equal(deviceCount, DEVICES);
    const ids = Object.values(reference.histories).flatMap((ps) =>
      ps.flatMap((p) => p.results.map((l) => l.id)),
    );
    assert.equal(ids.length, TOTAL, 'every location is in its device’s history');
    const expectedIds = [...new Set(ids)].sort();
    assert.equal(expectedIds.length, TOTAL, 'no location in two histories or twice in one');
    for (const [id, history] of Object.entries(reference.histories)) {
      assert.equal(history[0]?.pagination.total, STEPS, `device ${id}: its total`);
    }
    assert.ok(
      Object.values(reference.histories).some((ps) => ps.some((p) => p.results.some((l) => l.out_of_order))),
      'some locations arrived out of order',
    );
    const initial = await storedIds(db);
    assert.equal(initial.merged.length, 0, 'the server merged nothing: the child’s merge is the only one');
    assert.equal(initial.staged.length, TOTAL);

    /** The invariant, at any moment of a merge. */
    const assertNothingLostOrDuplicated = async (when: string, atLeastMerged: number) => {
      const stored = await storedIds(db);
      assert.equal(stored.merged.length + stored.staged.length, TOTAL, `${when}: as many rows as posted`);
      assert.deepEqual(
        [...stored.merged, ...stored.staged].sort(),
        expectedIds,
        `${when}: every posted location once, in one of the two tables`,
      );
      assert.ok(
        stored.merged.length >= atLeastMerged,
        `${when}: the reported chunks are merged (${stored.merged.length} ≥ ${atLeastMerged})`,
      );
      const now = await readAnswers(base, apiKey);
      assert.deepEqual(now, reference, `${when}: the API answers as before the merge`);
      return stored;
    };

    let reported = 0;
    for (const killAfter of KILL_AFTER_CHUNKS) {
      const { chunks, output } = await mergeKilledAfter(killAfter);
      assert.ok(chunks >= killAfter || output.includes('done '), `the child merged: ${output}`);
      reported += chunks;
      await assertNothingLostOrDuplicated(`after the kill at chunk ${killAfter}`, reported * CHUNK_ROWS);
    }

    await childStatementsEnded();
    const left = (await storedIds(db)).staged.length;
    const finished = await mergeStagedLocations(db.db, db.capabilities, { chunkRows: CHUNK_ROWS });
    assert.equal(finished.moved, left, 'the last merge took every row the killed ones left');
    const stored = await assertNothingLostOrDuplicated('after a merge to the end', TOTAL);
    assert.equal(stored.staged.length, 0, 'nothing left staged');
  });
});
