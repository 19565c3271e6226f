/**
 * bench:storage: what SQLite itself costs per 1,000 ingested locations, the floor under
 * bench:ingest's batch figure. The real schema (migrations) and the real write functions, without
 * HTTP, parsing or evaluation: per batch, in one transaction like ingestion, read 1,000 devices'
 * states (`lockDevices`: the rows, then each one's newest location), stage 1,000 locations
 * (`insertLocations`), write each device's newest location and the inside-sets that changed
 * (`saveNewestLocations`, `saveInsideSets`: none here), commit. 10,000 devices; each batch names
 * 1,000 distinct ones with rising timestamps, as bench:ingest's INGEST-10K workload does. The
 * staged locations are merged into the per-device history (`mergeStagedLocations`, ADR 008, "The
 * staged history") whenever `--merge-rows` of them are staged, as the server's merge does between
 * its intervals, and at the end; the merge's CPU per 1,000 locations it moved is a piece of the
 * total. The WAL checkpoint thread runs as in the server. Times are of the main thread (its own CPU
 * clock), averaged over the timed batches.
 *
 * One run on a fresh database. With many more devices than a batch names, each location's entry
 * in the per-device history index lands on a different leaf page, and each such page is one more
 * WAL frame: staging appends instead, and the merge writes each leaf once for all the rows it
 * moves there. The lock read finds each device's newest location in `device_last_locations`.
 *
 * `--history N` first stores N older locations (spread over the devices, untimed, merged), so the cost can
 * be compared at the table sizes a deployment reaches (it grows with them: ADR 008, "Consequences").
 *
 * `--pick random` names distinct devices drawn at random in each batch instead of a run of
 * consecutive ones (INGEST-10K's batches name devices created one after another, whose index
 * entries sit side by side; real traffic does not). `--per-batch N` sets the locations per
 * transaction: 48 with `--devices 200` is the shape of bench:ingest's single-POST groups (ADR 008,
 * "Consequences"). Figures stay per 1,000 locations.
 *
 * `--before-pragma "temp_store = default"` is a same-run A/B of a connection setting: rounds of two
 * fresh databases, one as the server opens it and one with that PRAGMA run after opening (the
 * setting as it was before a change), alternating so that load from other processes hits both
 * alike; `--rounds` pairs, medians and their ratio printed.
 * Usage: npm run bench:storage [-- --batches 150 --devices 10000 --history 0 --pick consecutive --per-batch 1000
 *   --layout staged|direct --merge-rows 20000 --merge-chunk 500 --before-pragma SETTING --rounds 3]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { withTransaction } from '../src/db/transaction.ts';
import { lockDevices, saveInsideSets } from '../src/devices/device-tracking.repository.ts';
import { saveNewestLocations } from '../src/devices/last-location.repository.ts';
import { mergeStagedLocations } from '../src/locations/history-merge.ts';
import { insertLocations, type StoredLocation } from '../src/locations/locations.repository.ts';
import { uuidv7 } from '../src/shared/ids.ts';
import { createBenchWorkspace } from './support/bench-workspace.ts';
import { median } from './support/load.ts';

const { values } = parseArgs({
  options: {
    batches: { type: 'string', default: '150' },
    devices: { type: 'string', default: '10000' },
    history: { type: 'string', default: '0' },
    pick: { type: 'string', default: 'consecutive' },
    'per-batch': { type: 'string', default: '1000' },
    // Staged locations that start a merge (the server's HISTORY_MERGE_ROWS default).
    'merge-rows': { type: 'string', default: '20000' },
    // Where timed locations go: `staged` (a group of single POSTs) or `direct` (a batch; ADR 008).
    layout: { type: 'string', default: 'staged' },
    // Rows per merge chunk (unset: the server's default for the dialect).
    'merge-chunk': { type: 'string' },
    'before-pragma': { type: 'string' },
    rounds: { type: 'string', default: '3' },
  },
});
if (values.pick !== 'consecutive' && values.pick !== 'random')
  throw new Error('--pick: consecutive or random');
const BATCHES = Number(values.batches);
const DEVICES = Number(values.devices);
const HISTORY = Number(values.history);
const PER_BATCH = Number(values['per-batch']);
const MERGE_ROWS = Number(values['merge-rows']);
const STAGED = values.layout !== 'direct';
const MERGE_CHUNK = values['merge-chunk'] === undefined ? {} : { chunkRows: Number(values['merge-chunk']) };
const RANDOM = values.pick === 'random';
const WARMUP = Math.ceil(BATCHES / 3);
const BEFORE_PRAGMA = values['before-pragma'];
if (BEFORE_PRAGMA !== undefined && !/^[a-z_]+ = [a-z0-9_-]+$/i.test(BEFORE_PRAGMA)) {
  throw new Error('--before-pragma: "name = value", e.g. "temp_store = default"');
}
const ROUNDS = Number(values.rounds);

interface Piece {
  read: number;
  insert: number;
  update: number;
  commit: number;
}

/** The pieces of a batch, and the merge's CPU per 1,000 locations, as printed. */
type Figures = Piece & { merge: number; longestChunkMs: number; total: number };

/** A stored location as ingestion writes it; `k` spreads the longitudes. */
function locationRow(
  workspaceId: string,
  deviceId: string,
  k: number,
  lat: number,
  recordedAt: Date,
  receivedAt: Date,
): StoredLocation {
  return {
    id: uuidv7(),
    workspaceId,
    deviceId,
    sessionId: null,
    lng: 13 + (k % 100) / 1000,
    lat,
    accuracy: 5,
    speed: null,
    heading: null,
    altitude: null,
    metadata: {},
    recordedAt,
    recordedAtIso: recordedAt.toISOString(),
    receivedAt,
    outOfOrder: false,
  };
}

/** Batch b's run of consecutive devices (wrapping around). */
function consecutiveDevices(deviceIds: readonly string[], b: number): string[] {
  return Array.from({ length: PER_BATCH }, (_, i) => deviceIds[(b * PER_BATCH + i) % DEVICES] as string);
}

/** `count` distinct devices drawn at random (a partial Fisher–Yates shuffle). */
function randomDevices(deviceIds: readonly string[], count: number): string[] {
  const pool = [...deviceIds];
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(Math.random() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j] as string, pool[i] as string];
  }
  return pool.slice(0, count);
}

/** Milliseconds of this thread's CPU time (user + system). */
function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

async function run(pragma?: string): Promise<Figures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-storage-'));
  const handle = openDatabase(
    { kind: 'sqlite', path: path.join(dir, 'storage.db') },
    { walCheckpointIntervalMs: 50 },
  );
  try {
    await migrateToLatest(handle);
    const { db, capabilities } = handle;
    // Checked above to be a bare `name = value`: no value of a request ever reaches this text.
    if (pragma !== undefined) await sql.raw(`pragma ${pragma}`).execute(db);
    const { workspaceId, deviceIds } = await createBenchWorkspace(db, DEVICES);

    // Older history first, one device after another per chunk as batches would write it.
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const historyStart = t0 - HISTORY * 1000;
    for (let n = 0; n < HISTORY; n += 5000) {
      const count = Math.min(5000, HISTORY - n);
      await withTransaction(db, (trx) =>
        insertLocations(
          trx,
          capabilities,
          Array.from({ length: count }, (_, i) => {
            const k = n + i;
            const recordedAt = new Date(historyStart + k * 1000);
            return locationRow(workspaceId, deviceIds[k % DEVICES] as string, k, 52, recordedAt, recordedAt);
          }),
          false,
        ),
      );
    }
    await mergeStagedLocations(db, capabilities);
    const pieces: Piece[] = [];
    // The merges after timed batches: main-thread CPU and locations moved.
    const merged = { cpuMs: 0, moved: 0, longestChunkMs: 0 };
    let staged = 0;
    const merge = async (timed: boolean) => {
      const result = await mergeStagedLocations(db, capabilities, MERGE_CHUNK);
      staged = 0;
      if (!timed) return;
      merged.cpuMs += result.cpuMicros / 1000;
      merged.moved += result.moved;
      merged.longestChunkMs = Math.max(merged.longestChunkMs, result.longestChunkMs);
    };
    for (let b = 0; b < BATCHES; b++) {
      const recordedAt = new Date(t0 + b * 1000);
      const receivedAt = new Date();
      const ids = RANDOM ? randomDevices(deviceIds, PER_BATCH) : consecutiveDevices(deviceIds, b);
      const piece: Piece = { read: 0, insert: 0, update: 0, commit: 0 };
      let mark = threadCpuMs();
      const lap = (): number => {
        const at = threadCpuMs();
        const spent = at - mark;
        mark = at;
        return spent;
      };
      await withTransaction(db, async (trx) => {
        lap(); // BEGIN is counted with the commit below
        const states = await lockDevices(trx, capabilities, workspaceId, ids);
        piece.read = lap();
        const locations = ids.map((deviceId, i) =>
          locationRow(workspaceId, deviceId, i, 52 + b / 10_000, recordedAt, receivedAt),
        );
        lap(); // building the rows is not storage
        await insertLocations(trx, capabilities, locations, STAGED);
        piece.insert = lap();
        // Each device's newest location, then the device rows: only inside-sets that changed are
        // written (none here: no geofences).
        await saveNewestLocations(
          trx,
          capabilities,
          locations.map((l) => ({
            id: l.deviceId,
            lastSeenAt: l.receivedAt,
            lastLocation: {
              point: { type: 'Point', coordinates: [l.lng, l.lat] },
              timestamp: l.recordedAtIso,
              accuracy: l.accuracy,
              location_id: l.id,
            },
          })),
        );
        await saveInsideSets(
          trx,
          capabilities,
          workspaceId,
          ids.flatMap((id) => {
            const before = states.get(id)?.insideGeofenceIds ?? [];
            return before.length === 0 ? [] : [{ id, insideGeofenceIds: [] }];
          }),
        );
        piece.update = lap();
      });
      piece.commit = lap();
      if (b >= WARMUP) pieces.push(piece);
      staged += PER_BATCH;
      if (staged >= MERGE_ROWS) await merge(b >= WARMUP);
    }
    await merge(true);
    // The thread's CPU clock ticks in milliseconds (jiffies): per-batch figures are quantised, so
    // the figure is the sum over the timed batches divided by their number.
    const perThousand = 1000 / PER_BATCH;
    const mean = (key: keyof Piece) =>
      Math.round((pieces.reduce((sum, p) => sum + p[key], 0) / pieces.length) * perThousand * 100) / 100;
    const result = {
      read: mean('read'),
      insert: mean('insert'),
      update: mean('update'),
      commit: mean('commit'),
    };
    const mergeMs = merged.moved > 0 ? Math.round((merged.cpuMs / merged.moved) * 1000 * 100) / 100 : 0;
    return {
      ...result,
      merge: mergeMs,
      longestChunkMs: Math.round(merged.longestChunkMs * 100) / 100,
      total: Math.round((result.read + result.insert + result.update + result.commit + mergeMs) * 100) / 100,
    };
  } finally {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const line = (name: string, p: Figures) =>
  `${name.padEnd(24)} read ${p.read} · insert ${p.insert} · device update ${p.update} · commit ${p.commit} · merge ${p.merge} → ${p.total} ms CPU per 1,000 (ceiling ${Math.round(1_000_000 / p.total)} locations/s from storage alone; longest merge chunk ${p.longestChunkMs} ms)`;
console.log(
  `bench:storage — SQLite, ${STAGED ? 'staged' : 'direct'} layout, ${DEVICES} devices, ${HISTORY} stored locations before, ${BATCHES} batches of ${PER_BATCH} ${RANDOM ? 'random' : 'consecutive'} devices (first ${WARMUP} untimed); main-thread CPU, averages per 1,000 locations`,
);
const medianFigures = (runs: Figures[]): Figures => {
  const of = (key: keyof Figures) => Math.round(median(runs.map((r) => r[key])) * 100) / 100;
  return {
    read: of('read'),
    insert: of('insert'),
    update: of('update'),
    commit: of('commit'),
    merge: of('merge'),
    longestChunkMs: of('longestChunkMs'),
    total: of('total'),
  };
};
const current: Figures[] = [];
const before: Figures[] = [];
for (let round = 0; round < (BEFORE_PRAGMA === undefined ? 1 : ROUNDS); round++) {
  const now = await run();
  current.push(now);
  console.log(line(`schema as it is${BEFORE_PRAGMA === undefined ? '' : ` (${round + 1})`}`, now));
  if (BEFORE_PRAGMA !== undefined) {
    const then = await run(BEFORE_PRAGMA);
    before.push(then);
    console.log(line(`with ${BEFORE_PRAGMA} (${round + 1})`, then));
  }
}
const full = medianFigures(current);
const previous = before.length > 0 ? medianFigures(before) : undefined;
if (previous) {
  console.log(line('median, as it is', full));
  console.log(line(`median, ${BEFORE_PRAGMA}`, previous));
  console.log(
    `as it is ÷ ${BEFORE_PRAGMA}: ${Math.round((full.total / previous.total) * 1000) / 1000} (total CPU)`,
  );
}
console.log('50,000 locations/s leaves 20 ms per 1,000 for everything');
console.log(
  JSON.stringify({
    bench: 'storage',
    devices: DEVICES,
    history: HISTORY,
    batches: BATCHES,
    per_batch: PER_BATCH,
    merge_rows: MERGE_ROWS,
    pick: values.pick,
    full_ms_per_1000: full,
    storage_ceiling_locations_per_s: Math.round(1_000_000 / full.total),
    ...(previous
      ? {
          before_pragma: BEFORE_PRAGMA,
          before_ms_per_1000: previous,
          ratio_total: Math.round((full.total / previous.total) * 1000) / 1000,
        }
      : {}),
  }),
);
