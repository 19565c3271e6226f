/**
 * bench:queries (ADR 008, "Storage settings"): the location history
 * and event list queries of the contract, timed on tables of millions of rows.
 *
 * The real schema (migrations) and the real repository functions (`listLocations`, `listEvents`:
 * one page and the total, as the API answers them). Data: `--locations` locations over `--devices`
 * devices, a quarter of them on one heavy device (a vehicle reporting every second for months),
 * some in a tracking session; `--events` events over 1,000 geofences. Written in bulk, untimed.
 * Each query then runs `--repeats` times: median and p95 milliseconds. On SQLite the plan of each
 * page query is printed too (a plan that scans the table is flagged).
 * Runs on SQLite (a file); `--postgres` runs on a fresh PostgreSQL database instead.
 * Usage: npm run bench:queries [-- --locations 2000000 --events 500000 --devices 1000 --repeats 25 --postgres]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CompiledQuery, type RootOperationNode } from 'kysely';
import { type DatabaseHandle, type Db, openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { withTransaction } from '../src/db/transaction.ts';
import {
  type EventFilters,
  type GeofenceEvent,
  insertEventsWithOutbox,
  listEvents,
} from '../src/events/events.repository.ts';
import {
  insertLocations,
  type LocationFilters,
  listLocations,
  type StoredLocation,
} from '../src/locations/locations.repository.ts';
import { uuidv7 } from '../src/shared/ids.ts';
import { explainQuery, QueryRecorder } from '../test/helpers/query-plans.ts';
import { createBenchWorkspace } from './support/bench-workspace.ts';
import { median, percentile } from './support/load.ts';
import { createBenchDatabase, dropBenchDatabase } from './support/postgres.ts';

const { values } = parseArgs({
  options: {
    locations: { type: 'string', default: '2000000' },
    events: { type: 'string', default: '500000' },
    devices: { type: 'string', default: '1000' },
    repeats: { type: 'string', default: '25' },
    postgres: { type: 'boolean', default: false },
  },
});
const LOCATIONS = Number(values.locations);
const EVENTS = Number(values.events);
const DEVICES = Number(values.devices);
const REPEATS = Number(values.repeats);
const GEOFENCES = 1000;
const CHUNK = 5000;
const T0 = Date.parse('2026-01-01T00:00:00Z');

const round = (x: number) => Math.round(x * 100) / 100;

interface Data {
  workspaceId: string;
  heavy: string;
  light: string;
  sessionId: string;
  geofenceId: string;
  lastTime: number;
}

/** Locations: one in four on the heavy device, the rest spread; every 50th light-device row in a session. */
async function fill(handle: DatabaseHandle): Promise<Data> {
  const { db, capabilities } = handle;
  const { workspaceId, deviceIds } = await createBenchWorkspace(db, DEVICES);
  const heavy = deviceIds[0] as string;
  const light = deviceIds[1] as string;
  const sessionId = uuidv7();
  let lastTime = T0;
  for (let n = 0; n < LOCATIONS; n += CHUNK) {
    const rows: StoredLocation[] = [];
    for (let i = n; i < Math.min(LOCATIONS, n + CHUNK); i++) {
      // Location i happens at second i; every 4th belongs to the heavy device.
      const deviceId = i % 4 === 0 ? heavy : (deviceIds[1 + (i % (DEVICES - 1))] as string);
      const at = new Date(T0 + i * 1000);
      lastTime = at.getTime();
      rows.push({
        id: uuidv7(),
        workspaceId,
        deviceId,
        sessionId: deviceId === light && i % 50 < 25 ? sessionId : null,
        lng: 13 + (i % 1000) / 10_000,
        lat: 52.5,
        accuracy: 5,
        speed: null,
        heading: null,
        altitude: null,
        metadata: {},
        recordedAt: at,
        recordedAtIso: at.toISOString(),
        receivedAt: at,
        outOfOrder: false,
      });
    }
    await withTransaction(db, (trx) => insertLocations(trx, capabilities, rows, false));
  }
  const geofenceIds = Array.from({ length: GEOFENCES }, () => uuidv7());
  for (let n = 0; n < EVENTS; n += CHUNK) {
    const rows: GeofenceEvent[] = [];
    for (let i = n; i < Math.min(EVENTS, n + CHUNK); i++) {
      const at = new Date(T0 + i * 4000);
      const deviceId = i % 4 === 0 ? heavy : (deviceIds[1 + (i % (DEVICES - 1))] as string);
      rows.push({
        id: uuidv7(),
        workspaceId,
        eventId: `e${i}`,
        eventType: i % 2 === 0 ? 'enter' : 'exit',
        deviceId,
        userId: deviceId,
        geofenceId: geofenceIds[i % GEOFENCES] as string,
        geofenceName: 'fence',
        lng: 13.4,
        lat: 52.5,
        locationId: uuidv7(),
        sessionId: null,
        occurredAt: at,
        createdAt: at,
        metadata: { geofence_metadata: {}, event_metadata: {} },
      });
    }
    await withTransaction(db, (trx) => insertEventsWithOutbox(trx, capabilities, rows, new Date()));
  }
  return { workspaceId, heavy, light, sessionId, geofenceId: geofenceIds[0] as string, lastTime };
}

interface Timing {
  query: string;
  median_ms: number;
  p95_ms: number;
  total: number;
  plan?: string;
}

async function time(label: string, run: () => Promise<{ total: number }>): Promise<Timing> {
  const ms: number[] = [];
  let total = 0;
  for (let r = 0; r < REPEATS; r++) {
    const started = performance.now();
    total = (await run()).total;
    ms.push(performance.now() - started);
  }
  return { query: label, median_ms: round(median(ms)), p95_ms: round(percentile(ms, 95)), total };
}

/** The plan of a query, on one line; a full scan of a large table is flagged. */
async function planOf(
  handle: DatabaseHandle,
  dialect: 'sqlite' | 'postgres',
  node: RootOperationNode,
): Promise<string> {
  const text = await explainQuery(handle.db, dialect, node);
  const scans =
    dialect === 'sqlite' ? /\bSCAN (locations|geofence_events)\b/ : /Seq Scan on (locations|geofence_events)/;
  return scans.test(text) ? `FULL SCAN: ${text}` : text;
}

async function runOn(handle: DatabaseHandle, dialect: 'sqlite' | 'postgres'): Promise<Timing[]> {
  await migrateToLatest(handle);
  const fillStarted = performance.now();
  const d = await fill(handle);
  console.log(
    `${dialect}: ${LOCATIONS} locations and ${EVENTS} events written in ${Math.round((performance.now() - fillStarted) / 1000)} s`,
  );
  // Autovacuum would get there on its own: statistics, and the visibility map that lets a count
  // be an index-only scan.
  if (dialect === 'postgres') await handle.db.executeQuery(CompiledQuery.raw('vacuum analyze'));
  const recorder = new QueryRecorder();
  const recorded = handle.db.withPlugin(recorder);
  const hour = 3_600_000;
  const locationCases: Array<[string, LocationFilters, number]> = [
    ['history: heavy device, newest page', { deviceId: d.heavy }, 0],
    [
      'history: heavy device, one hour',
      { deviceId: d.heavy, from: new Date(d.lastTime - hour), to: new Date(d.lastTime) },
      0,
    ],
    ['history: heavy device, page at offset 10,000', { deviceId: d.heavy }, 10_000],
    ['history: light device, newest page', { deviceId: d.light }, 0],
    ['history: light device, one session', { deviceId: d.light, sessionId: d.sessionId }, 0],
  ];
  const eventCases: Array<[string, EventFilters]> = [
    ['events: workspace, newest page', {}],
    ['events: heavy device', { deviceId: d.heavy }],
    ['events: one geofence', { geofenceId: d.geofenceId }],
    [
      'events: enters of one day',
      { eventType: 'enter', from: new Date(T0 + 86_400_000), to: new Date(T0 + 2 * 86_400_000) },
    ],
  ];
  const out: Timing[] = [];
  // One run through the recorder warms the caches and gives the statements (page, then count)
  // whose plans are printed; the timed runs go through the plain connection.
  const measure = async (label: string, run: (db: Db) => Promise<{ total: number }>): Promise<void> => {
    recorder.nodes = [];
    await run(recorded);
    const [page, count] = recorder.nodes;
    const timing = await time(label, () => run(handle.db));
    const plan =
      page && count
        ? `page: ${await planOf(handle, dialect, page)} || count: ${await planOf(handle, dialect, count)}`
        : undefined;
    out.push(plan === undefined ? timing : { ...timing, plan });
  };
  for (const [label, filters, offset] of locationCases) {
    await measure(label, (db) =>
      listLocations(db, d.workspaceId, filters, offset, 50).then((r) => ({ total: r.total })),
    );
  }
  for (const [label, filters] of eventCases) {
    await measure(label, (db) =>
      listEvents(db, d.workspaceId, filters, 0, 50).then((r) => ({ total: r.total })),
    );
  }
  return out;
}

const results: Array<{ database: string; queries: Timing[] }> = [];
if (!values.postgres) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-queries-'));
  const handle = openDatabase(
    { kind: 'sqlite', path: path.join(dir, 'queries.db') },
    { walCheckpointIntervalMs: 50 },
  );
  try {
    results.push({ database: 'sqlite', queries: await runOn(handle, 'sqlite') });
  } finally {
    await handle.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
} else {
  const name = `bench_queries_${process.pid}`;
  const url = createBenchDatabase(name);
  const handle = openDatabase({ kind: 'postgres', url });
  try {
    results.push({ database: 'postgres', queries: await runOn(handle, 'postgres') });
  } finally {
    await handle.close();
    dropBenchDatabase(name);
  }
}
for (const r of results) {
  console.log(
    `bench:queries — ${r.database}, ${LOCATIONS} locations, ${EVENTS} events; page of 50 + total, ${REPEATS} runs each`,
  );
  for (const q of r.queries) {
    console.log(
      `  ${q.query.padEnd(46)} median ${String(q.median_ms).padStart(8)} ms · p95 ${String(q.p95_ms).padStart(8)} ms · total ${q.total}`,
    );
    console.log(`    plan: ${q.plan ?? '?'}`);
  }
}
console.log(
  JSON.stringify({ bench: 'queries', locations: LOCATIONS, events: EVENTS, devices: DEVICES, results }),
);
