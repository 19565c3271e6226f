/**
 * The staged history (ADR 008): the locations of single posts are appended to `locations_staged`
 * and moved into `locations` by the merge, a batch's are written to `locations` at once, and no
 * answer of the API depends on where a row is.
 *
 * - A property: the same random track replayed into two databases, one never merged and one
 *   merged (whole merges and single chunks of random sizes) at random points between the writes,
 *   gives the same answers: every write's, and then each device's, its events, its history pages
 *   (also between `from` and `to`) and its sessions' locations and summaries; again after a final
 *   merge. Never merged, every location is still listed exactly once, the single posts' staged and
 *   the batches' not.
 * - Two merges at once move each staged row once, beside a batch's rows already in `locations`.
 * - Retention deletes old rows from both tables and keeps each device's newest.
 * - A deleted device's staged rows are dropped by the merge, other devices' moved.
 * - A failed merge is logged and counted on /metrics, moves nothing and loses nothing; the next one
 *   moves everything, and /metrics shows when the last one succeeded (the injected clock's time).
 *
 * The last three stage their rows through concurrent single posts, which the server groups.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { mergeStagedChunk, stagedCount } from '../../src/locations/history-merge.repository.ts';
import { mergeStagedLocations, runHistoryMerge } from '../../src/locations/history-merge.ts';
import { purgeOldLocations } from '../../src/locations/retention.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import type { TestApp } from '../helpers/app.ts';
import { call, expectError, expectStatus, signUp, startIdentityApp } from '../helpers/identity.ts';
import {
  type BatchOut,
  type Credentials,
  createDevice,
  getDevice,
  type LocationOut,
  listAll,
  postLocation,
} from './helpers.ts';
import { caseArb, type MergeSpec, planOf, postConcurrently, Replay } from './staged-history-helpers.ts';

const DAY_MS = 86_400_000;

/** Runs `spec` in `t`'s database and checks what it reports against the staged count. */
async function merge(t: TestApp, spec: MergeSpec): Promise<void> {
  const { db, capabilities } = t.deps.database;
  const staged = await stagedCount(db);
  if (spec.whole) {
    const result = await mergeStagedLocations(db, capabilities, { chunkRows: spec.chunkRows });
    assert.equal(result.moved, staged, 'a whole merge moves every staged row');
    assert.equal(result.chunks, Math.ceil(staged / spec.chunkRows));
  } else {
    const moved = await mergeStagedChunk(db, capabilities, spec.chunkRows);
    assert.equal(moved, Math.min(staged, spec.chunkRows), 'a chunk moves the oldest rows up to its size');
  }
  assert.equal(await stagedCount(db), staged - Math.min(staged, spec.whole ? staged : spec.chunkRows));
}

/** Rows of `workspaceId` in `locations` and in `locations_staged`. */
async function inTables(t: TestApp, workspaceId: string): Promise<[number, number]> {
  const { rows } = await sql<{ merged: number | string; staged: number | string }>`
    select (select count(*) from locations where workspace_id = ${workspaceId}) as merged,
           (select count(*) from locations_staged where workspace_id = ${workspaceId}) as staged`.execute(
    t.deps.database.db,
  );
  return [Number(rows[0]?.merged), Number(rows[0]?.staged)];
}

describe('the staged history answers as the merged one (property)', () => {
  // One clock for both databases: every time the API answers (received_at, last_seen_at, created_at
  // of events and sessions) is the same in both replays.
  const clock = new ManualClock('2026-03-10T12:00:00.000Z');
  let never: TestApp;
  let merged: TestApp;

  before(async () => {
    never = await startIdentityApp({ clock });
    merged = await startIdentityApp({ clock });
  });
  after(async () => {
    await Promise.all([never?.close(), merged?.close()]);
  });

  test('random tracks, sessions and merges: the same answers merged or not', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const plan = planOf(c, clock.now().getTime() - DAY_MS);
        const a = await Replay.open(never, c, 'never-merged');
        const b = await Replay.open(merged, c, 'merged');
        for (const [n, { step, merge: spec }] of plan.steps.entries()) {
          // Each write a moment after the previous one: last_seen_at and received_at tell them apart.
          clock.advance(7);
          const answerA = await a.apply(step);
          assert.deepEqual(await b.apply(step), answerA, `step ${n}: ${JSON.stringify(step)}`);
          if (spec !== null) await merge(merged, spec);
        }

        const expected = await a.answers(c.queries, plan.times);
        assert.deepEqual(await b.answers(c.queries, plan.times), expected, 'partly merged');
        await merge(merged, { whole: true, chunkRows: 1 + (c.steps.length % 50) });
        assert.equal(await stagedCount(merged.deps.database.db), 0);
        assert.deepEqual(await b.answers(c.queries, plan.times), expected, 'all merged');

        for (const [d, id] of a.deviceIds.entries()) {
          const history = await listAll<LocationOut>(never, a.credentials, `/devices/${id}/locations`);
          const ids = history.map((l) => l.id);
          assert.equal(ids.length, a.storedCounts[d], `device ${d}: every location listed`);
          assert.equal(new Set(ids).size, ids.length, `device ${d}: none twice`);
          for (const posted of a.postedIds[d] ?? []) assert.ok(ids.includes(posted), `${posted} listed`);
        }
        // Never merged: the single posts' locations are still staged, the batches' never were.
        assert.equal(
          a.written.staged + a.written.direct,
          a.storedCounts.reduce((x, y) => x + y, 0),
        );
        assert.ok(a.written.staged > 0, 'some locations were staged');
        assert.deepEqual(
          await inTables(never, a.workspaceId),
          [a.written.direct, a.written.staged],
          'never merged',
        );
        assert.deepEqual(
          await inTables(merged, b.workspaceId),
          [b.written.direct + b.written.staged, 0],
          'all merged',
        );
      }),
      { numRuns: 12 },
    );
  });
});

describe('merging the staged history', () => {
  let t: TestApp;
  let jwt: Credentials;
  let workspaceId: string;

  before(async () => {
    t = await startIdentityApp();
    const user = await signUp(t, 'staged');
    jwt = { token: user.tokens.access_token };
    workspaceId = user.workspace.id;
  });
  after(async () => t?.close());

  /** `count` locations of `deviceId`, from `first` seconds after `base`, one a second. */
  const track = (deviceId: string, base: number, first: number, count: number) =>
    Array.from({ length: count }, (_, k) => ({
      deviceId,
      body: {
        coordinates: [20 + (first + k) * 1e-4, 40],
        timestamp: new Date(base + (first + k) * 1000).toISOString(),
      },
    }));

  /** The tracks of several devices, interleaved: concurrent posts of one group name them all. */
  const interleave = <T>(...tracks: T[][]): T[] =>
    Array.from({ length: Math.max(...tracks.map((x) => x.length)) }, (_, k) =>
      tracks.flatMap((x) => (k < x.length ? [x[k] as T] : [])),
    ).flat();

  /** Stages `locations` through concurrent single posts, and checks that they were staged. */
  const stage = async (locations: ReturnType<typeof track>) => {
    const staged = await stagedCount(t.deps.database.db);
    const stored = await postConcurrently(t, jwt, locations);
    assert.equal(new Set(stored.map((l) => l.id)).size, locations.length);
    assert.equal(await stagedCount(t.deps.database.db), staged + locations.length, 'single posts stage');
    return stored;
  };

  /** Writes `locations` with one batch: straight into `locations`, nothing staged. */
  const batch = async (locations: ReturnType<typeof track>) => {
    const staged = await stagedCount(t.deps.database.db);
    const body = { locations: locations.map((l) => ({ device_id: l.deviceId, ...l.body })) };
    const answer = expectStatus<BatchOut>(await call(t, '/locations/batch', { ...jwt, body }), 200, 'batch');
    assert.equal(answer.accepted, locations.length);
    assert.equal(await stagedCount(t.deps.database.db), staged, 'a batch stages nothing');
  };

  const counts = async (table: 'locations' | 'locations_staged', deviceId: string) => {
    const { rows } = await sql<{ n: number | string; d: number | string }>`
      select count(*) as n, count(distinct id) as d from ${sql.table(table)}
      where device_id = ${deviceId}`.execute(t.deps.database.db);
    return { rows: Number(rows[0]?.n), distinct: Number(rows[0]?.d) };
  };

  const mergeAll = () => mergeStagedLocations(t.deps.database.db, t.deps.database.capabilities);

  test('two merges at once move each staged row exactly once', async () => {
    await mergeAll();
    const base = t.clock.now().getTime() - DAY_MS;
    const devices = [(await createDevice(t, jwt)).id, (await createDevice(t, jwt)).id];
    // Each device: 100 locations of a batch (in `locations` at once), then 750 newer ones staged.
    await batch(interleave(...devices.map((id) => track(id, base, 0, 100))));
    await stage(interleave(...devices.map((id) => track(id, base, 100, 750))));
    const staged = await stagedCount(t.deps.database.db);
    assert.equal(staged, 1500);
    for (const id of devices) {
      assert.deepEqual(await counts('locations', id), { rows: 100, distinct: 100 });
      assert.deepEqual(await counts('locations_staged', id), { rows: 750, distinct: 750 });
    }
    const history = (id: string) => listAll<LocationOut>(t, jwt, `/devices/${id}/locations`);
    const before = await Promise.all(devices.map(history));
    assert.deepEqual(
      before.map((h) => h.length),
      [850, 850],
    );

    const { db, capabilities } = t.deps.database;
    const results = await Promise.all([
      mergeStagedLocations(db, capabilities, { chunkRows: 100 }),
      mergeStagedLocations(db, capabilities, { chunkRows: 100 }),
    ]);
    assert.equal(
      results.reduce((sum, r) => sum + r.moved, 0),
      staged,
      `moved ${results.map((r) => r.moved).join(' + ')}`,
    );
    assert.equal(await stagedCount(db), 0);
    for (const id of devices) assert.deepEqual(await counts('locations', id), { rows: 850, distinct: 850 });
    const { rows } = await sql<{ n: number | string; d: number | string }>`
      select count(*) as n, count(distinct id) as d from locations where workspace_id = ${workspaceId}`.execute(
      db,
    );
    assert.deepEqual([Number(rows[0]?.n), Number(rows[0]?.d)], [1700, 1700]);
    assert.deepEqual(await Promise.all(devices.map(history)), before, 'the history answers as before');
  });

  test('retention deletes old rows of both tables and keeps each device its newest', async () => {
    await mergeAll();
    const { db, capabilities } = t.deps.database;
    const now = t.clock.now().getTime();
    const base = now - DAY_MS;
    const at = (s: number) => new Date(base + s * 1000).toISOString();
    const N = 100;
    const [one, two] = [(await createDevice(t, jwt)).id, (await createDevice(t, jwt)).id];
    // N each, staged and merged.
    await stage(interleave(track(one, base, 0, N), track(two, base, 0, N)));
    assert.equal((await mergeStagedLocations(db, capabilities)).moved, 2 * N);
    // Staged: N newer ones of `one`, then another of its newest time (now its last location); N
    // out-of-order ones of `two`, whose newest stays the merged one of second N - 1.
    const late = Array.from({ length: N }, (_, k) => ({
      deviceId: two,
      body: { coordinates: [22, 40], timestamp: new Date(base + k * 1000 - 500).toISOString() },
    }));
    await stage(interleave(track(one, base, N, N), late));
    const tie = await postLocation(t, jwt, one, { coordinates: [21, 41], timestamp: at(2 * N - 1) });
    assert.equal(await stagedCount(db), 2 * N + 1);
    const lastLocation = async (deviceId: string) =>
      (
        await db
          .selectFrom('device_last_locations')
          .select('location_id')
          .where('device_id', '=', deviceId)
          .executeTakeFirstOrThrow()
      ).location_id;
    assert.equal(await lastLocation(one), tie.location.id);
    const twoNewest = (await listAll<LocationOut>(t, jwt, `/devices/${two}/locations`)).find(
      (l) => l.timestamp === at(N - 1),
    );
    assert.equal(await lastLocation(two), twoNewest?.id);
    const devicesBefore = [await getDevice(t, jwt, one), await getDevice(t, jwt, two)];

    // Received 100 days ago: every row of both devices, except the later-staged half of `two`'s
    // staged ones (in arrival order: concurrent posts arrive in any order).
    const old = new Date(now - 100 * DAY_MS);
    await db
      .updateTable('locations')
      .set({ received_at: old })
      .where('device_id', 'in', [one, two])
      .execute();
    await db.updateTable('locations_staged').set({ received_at: old }).where('device_id', '=', one).execute();
    const twoStaged = await db
      .selectFrom('locations_staged')
      .select(['seq', 'recorded_at'])
      .where('device_id', '=', two)
      .orderBy('seq')
      .execute();
    assert.equal(twoStaged.length, N);
    await db
      .updateTable('locations_staged')
      .set({ received_at: old })
      .where(
        'seq',
        'in',
        twoStaged.slice(0, N / 2).map((r) => r.seq),
      )
      .execute();
    const twoKept = twoStaged
      .slice(N / 2)
      .map((r) => new Date(r.recorded_at).toISOString())
      .sort();

    // `one`: its N merged rows and N - 1 of its staged ones (the two of its newest time stay);
    // `two`: N - 1 of its merged rows (its newest stays) and the N / 2 back-dated staged ones.
    assert.deepEqual(await purgeOldLocations(db, t.clock, 90), { deleted: N + (N - 1) + (N - 1) + N / 2 });
    assert.deepEqual(await purgeOldLocations(db, t.clock, 90), { deleted: 0 }, 'idempotent');

    const left = async (table: 'locations' | 'locations_staged', deviceId: string) =>
      (
        await db
          .selectFrom(table)
          .select(['id', 'recorded_at'])
          .where('device_id', '=', deviceId)
          .orderBy('recorded_at')
          .orderBy('id')
          .execute()
      ).map((r) => new Date(r.recorded_at).toISOString());
    assert.deepEqual(await left('locations', one), []);
    assert.deepEqual(await left('locations_staged', one), [at(2 * N - 1), at(2 * N - 1)]);
    assert.deepEqual(await left('locations', two), [at(N - 1)]);
    assert.deepEqual(await left('locations_staged', two), twoKept);
    assert.deepEqual(
      (await listAll<LocationOut>(t, jwt, `/devices/${one}/locations`)).map((l) => l.timestamp),
      [at(2 * N - 1), at(2 * N - 1)],
    );
    const twoHistory = await listAll<LocationOut>(t, jwt, `/devices/${two}/locations`);
    assert.deepEqual(
      twoHistory.map((l) => l.timestamp),
      [at(N - 1), ...[...twoKept].reverse()],
    );
    assert.equal(twoHistory[0]?.id, twoNewest?.id);
    const page = expectStatus<{ pagination: { total: number } }>(
      await call(t, `/devices/${two}/locations`, { ...jwt, query: { limit: '1' } }),
      200,
    );
    assert.equal(page.pagination.total, 1 + N / 2);
    assert.deepEqual([await getDevice(t, jwt, one), await getDevice(t, jwt, two)], devicesBefore);
    assert.deepEqual([await lastLocation(one), await lastLocation(two)], [tie.location.id, twoNewest?.id]);
  });

  test("a deleted device's staged rows are dropped by the merge; the others' are moved", async () => {
    await mergeAll();
    const { db } = t.deps.database;
    const base = t.clock.now().getTime() - DAY_MS;
    const N = 200;
    const [gone, kept] = [(await createDevice(t, jwt)).id, (await createDevice(t, jwt)).id];
    // N rows of each merged, then N more staged.
    await stage(interleave(track(gone, base, 0, N), track(kept, base, 0, N)));
    assert.equal((await mergeAll()).moved, 2 * N);
    await stage(interleave(track(gone, base, N, N), track(kept, base, N, N)));
    assert.deepEqual(await counts('locations_staged', gone), { rows: N, distinct: N });
    expectStatus(await call(t, `/devices/${gone}`, { ...jwt, method: 'DELETE' }), 204, 'delete');
    expectError(await call(t, `/devices/${gone}/locations`, jwt), 404, 'NOT_FOUND');

    assert.equal((await mergeAll()).moved, 2 * N, 'both devices left the staged table');
    assert.deepEqual(await counts('locations', gone), { rows: 0, distinct: 0 });
    assert.deepEqual(await counts('locations_staged', gone), { rows: 0, distinct: 0 });
    assert.equal(
      (
        await db
          .selectFrom('device_last_locations')
          .select('device_id')
          .where('device_id', '=', gone)
          .execute()
      ).length,
      0,
    );
    assert.deepEqual(await counts('locations', kept), { rows: 2 * N, distinct: 2 * N });
    assert.deepEqual(await counts('locations_staged', kept), { rows: 0, distinct: 0 });
    const history = await listAll<LocationOut>(t, jwt, `/devices/${kept}/locations`);
    assert.deepEqual(
      history.map((l) => l.timestamp),
      Array.from({ length: 2 * N }, (_, k) => new Date(base + (2 * N - 1 - k) * 1000).toISOString()),
    );
  });

  test('a failed merge is logged and counted on /metrics; the next one merges all and is the last success', async () => {
    await mergeAll();
    const { db, capabilities } = t.deps.database;
    // The app's own logger: its lines are captured in t.logs.
    const merger = { db, capabilities, logger: t.deps.logger, state: t.deps.historyMerge };
    const failureLogs = () =>
      t.logs.filter((l) => l.job === 'history-merge' && l.msg === 'history merge failed').length;
    const logsBefore = failureLogs();
    const metric = async (name: string) => {
      const text = (await t.app.inject({ url: '/metrics' })).body;
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      assert.ok(line, `${name} is served`);
      return Number(line.split(' ')[1]);
    };
    const failuresBefore = await metric('history_merge_failures_total');
    const device = (await createDevice(t, jwt)).id;
    await stage(track(device, t.clock.now().getTime() - DAY_MS, 0, 30));
    const history = await listAll<LocationOut>(t, jwt, `/devices/${device}/locations`);

    // The staged table out of reach, as when the database fails mid-merge.
    await sql`alter table locations_staged rename to locations_staged_away`.execute(db);
    try {
      await runHistoryMerge(merger);
    } finally {
      await sql`alter table locations_staged_away rename to locations_staged`.execute(db);
    }
    assert.equal(failureLogs(), logsBefore + 1);
    assert.equal(await metric('history_merge_failures_total'), failuresBefore + 1);
    assert.deepEqual(await counts('locations_staged', device), { rows: 30, distinct: 30 }, 'nothing moved');

    t.clock.advance(5_000);
    await runHistoryMerge(merger);
    assert.equal(failureLogs(), logsBefore + 1);
    assert.equal(await metric('history_merge_failures_total'), failuresBefore + 1);
    assert.equal(
      await metric('history_merge_last_success_timestamp_seconds'),
      t.clock.now().getTime() / 1000,
    );
    assert.deepEqual(await counts('locations', device), { rows: 30, distinct: 30 });
    assert.deepEqual(await listAll<LocationOut>(t, jwt, `/devices/${device}/locations`), history);
  });
});
