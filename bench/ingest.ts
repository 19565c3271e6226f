/**
 * bench:ingest (issue 5), workload INGEST-10K (../shared/bench): the first 10,000 `fences()` as
 * geofences of one workspace, 10,000 devices, locations from `points()`.
 *  - Batch ingestion: POST /locations/batch with 1,000 locations a request (a few requests in
 *    flight), events committed before each answer: locations/s and events/s end to end.
 *  - Single-location POST /devices/{id}/locations at 64 connections: req/s as a ratio of bare
 *    Fastify's small POST in the same run, p50/p99 latency.
 *  - Resident memory of the server: per 10,000 geofences (index loaded) and per 10,000 devices.
 * Runs on SQLite, and on PostgreSQL too with --postgres (a fresh database is created and dropped).
 * Usage: npm run bench:ingest [-- --postgres --batches 100 --seconds 5]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
// @ts-expect-error: the shared workload generator is plain JavaScript without types.
import { fences, points } from '../../shared/bench/dataset.mjs';
import { freePort, load, median, startServer, stopServer } from './support/load.ts';

const { values } = parseArgs({
  options: {
    postgres: { type: 'boolean', default: false },
    'postgres-only': { type: 'boolean', default: false },
    batches: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '5' },
    fences: { type: 'string', default: '10000' },
    devices: { type: 'string', default: '10000' },
  },
});
const BATCHES = Number(values.batches);
const CONCURRENCY = Number(values.concurrency);
const SECONDS = Number(values.seconds);
const FENCES = Number(values.fences);
const DEVICES = Number(values.devices);

type Fence = { id: number; geometry: unknown };
const fenceRows = (fences as (n: number, seed: number) => Fence[])(FENCES, 1);
const queryPoints = (points as (n: number, seed: number) => Array<[number, number]>)(
  Math.max(200_000, BATCHES * 1000),
  2,
);

function rssKiB(pid: number | undefined): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

async function api(
  base: string,
  method: string,
  url: string,
  body: unknown,
  auth: Record<string, string>,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}/api/v1${url}`, {
    method,
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

interface DbFigures {
  database: string;
  batch_locations_per_s: number;
  batch_events_per_s: number;
  batch_events_total: number;
  single_rps: number;
  single_p50_ms: number;
  single_p99_ms: number;
  bare_post_rps: number;
  single_ratio: number;
  rss_mib_per_10k_geofences: number;
  rss_mib_per_10k_devices: number;
}

async function runOn(database: 'sqlite' | 'postgres', barePostRps: number): Promise<DbFigures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-ingest-'));
  const pgName = `bench_ingest_${process.pid}`;
  let databaseUrl = `sqlite:${path.join(dir, 'ingest.db')}`;
  if (database === 'postgres') {
    execFileSync('psql', [
      '-h',
      '127.0.0.1',
      '-U',
      'postgres',
      '-d',
      'test',
      '-qc',
      `create database ${pgName}`,
    ]);
    databaseUrl = `postgres://postgres@127.0.0.1:5432/${pgName}`;
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = await startServer(
    'src/server.ts',
    { DATA_DIR: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    port,
  );
  try {
    await api(base, 'POST', '/auth/register', { email: 'bench@example.com', password: 'bench password' }, {});
    const pair = await api(
      base,
      'POST',
      '/auth/login',
      { email: 'bench@example.com', password: 'bench password' },
      {},
    );
    const jwt = { authorization: `Bearer ${String(pair.access_token)}` };
    const key = String(
      (await api(base, 'POST', '/account/api-keys', { name: 'bench', scopes: ['*'] }, jwt)).key,
    );
    const auth = { 'x-api-key': key };
    // The free plan's limits would stop a benchmark; enterprise has none (issue 7 adds plans).
    await fetch(`${base}/api/v1/subscriptions/current`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...jwt },
      body: '{"plan":"enterprise"}',
    });

    const rssStart = rssKiB(server.pid);
    await pool(fenceRows, 8, async (f) => {
      await api(
        base,
        'POST',
        '/geofences',
        { name: `fence ${f.id}`, external_id: `f${f.id}`, geometry: f.geometry },
        auth,
      );
    });
    await api(base, 'GET', `/geofences/contains?lng=13.4&lat=52.5`, undefined, auth).catch(() => undefined);
    await fetch(`${base}/api/v1/geofences/contains?lng=13.4&lat=52.5`, { headers: auth });
    const rssFences = rssKiB(server.pid);

    // Batches: every request carries 1,000 distinct devices, timestamps rise per device.
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const batches = Array.from({ length: BATCHES }, (_, b) => ({
      locations: Array.from({ length: 1000 }, (_, i) => {
        const n = b * 1000 + i;
        const [lng, lat] = queryPoints[n % queryPoints.length] as [number, number];
        return {
          device_external_id: `dev-${n % DEVICES}`,
          coordinates: [lng, lat],
          timestamp: new Date(t0 + b * 1000).toISOString(),
        };
      }),
    }));
    // The first pass over all devices creates them; it is not timed.
    const warmup = Math.ceil(DEVICES / 1000);
    for (const batch of batches.slice(0, warmup)) await api(base, 'POST', '/locations/batch', batch, auth);
    const rssDevices = rssKiB(server.pid);
    let events = 0;
    const timed = batches.slice(warmup);
    const started = process.hrtime.bigint();
    await pool(timed, CONCURRENCY, async (batch) => {
      const answer = await api(base, 'POST', '/locations/batch', batch, auth);
      events += (answer.events as unknown[]).length;
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;

    // Single-location POSTs, random device and point per request.
    const devices = (await api(base, 'GET', '/devices?limit=200', undefined, auth)).results as Array<{
      id: string;
    }>;
    let k = 0;
    const single = await autocannon({
      url: base,
      connections: 64,
      duration: SECONDS,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth },
          setupRequest: (req) => {
            k++;
            const device = devices[k % devices.length] as { id: string };
            const [lng, lat] = queryPoints[(k * 7919) % queryPoints.length] as [number, number];
            return {
              ...req,
              path: `/api/v1/devices/${device.id}/locations`,
              body: JSON.stringify({ coordinates: [lng, lat] }),
            };
          },
        },
      ],
    });
    if (single.non2xx > 0) console.warn(`${database}: ${single.non2xx} single POSTs were not 2xx`);
    return {
      database,
      batch_locations_per_s: Math.round((timed.length * 1000) / seconds),
      batch_events_per_s: Math.round(events / seconds),
      batch_events_total: events,
      single_rps: Math.round(single.requests.average),
      single_p50_ms: single.latency.p50,
      single_p99_ms: single.latency.p99,
      bare_post_rps: barePostRps,
      single_ratio: Math.round((single.requests.average / barePostRps) * 1000) / 1000,
      rss_mib_per_10k_geofences: Math.round((((rssFences - rssStart) / 1024) * 10_000 * 10) / FENCES) / 10,
      rss_mib_per_10k_devices: Math.round((((rssDevices - rssFences) / 1024) * 10_000 * 10) / DEVICES) / 10,
    };
  } finally {
    await stopServer(server);
    fs.rmSync(dir, { recursive: true, force: true });
    if (database === 'postgres') {
      execFileSync('psql', [
        '-h',
        '127.0.0.1',
        '-U',
        'postgres',
        '-d',
        'test',
        '-qc',
        `drop database if exists ${pgName} with (force)`,
      ]);
    }
  }
}

const barePort = await freePort();
const bare = await startServer('bench/support/bare-fastify.ts', {}, barePort);
const bareRuns: number[] = [];
try {
  for (let i = 0; i < 3; i++) {
    bareRuns.push(
      (
        await load({
          url: `http://127.0.0.1:${barePort}/echo`,
          method: 'POST',
          body: '{"coordinates":[13.4,52.5]}',
          seconds: SECONDS,
        })
      ).rps,
    );
  }
} finally {
  await stopServer(bare);
}
const barePostRps = median(bareRuns);
const results: DbFigures[] = [];
if (!values['postgres-only']) results.push(await runOn('sqlite', barePostRps));
if (values.postgres || values['postgres-only']) results.push(await runOn('postgres', barePostRps));

console.log(
  `bench:ingest — INGEST-10K: ${FENCES} geofences, ${DEVICES} devices, ${BATCHES} batches of 1,000 (${CONCURRENCY} in flight)`,
);
for (const r of results) {
  console.log(
    `${r.database.padEnd(9)} batch ${r.batch_locations_per_s} locations/s (${r.batch_events_per_s} events/s, ${r.batch_events_total} events); ` +
      `single POST ${r.single_rps} req/s = ${r.single_ratio} × bare Fastify (${r.bare_post_rps}), p50 ${r.single_p50_ms} ms, p99 ${r.single_p99_ms} ms; ` +
      `RSS ${r.rss_mib_per_10k_geofences} MiB per 10k geofences, ${r.rss_mib_per_10k_devices} MiB per 10k devices`,
  );
}
console.log('targets: batch ≥ 50,000/s SQLite, ≥ 20,000/s PostgreSQL; single ≥ 0.35 × bare, p99 < 25 ms');
console.log(JSON.stringify({ bench: 'ingest', fences: FENCES, devices: DEVICES, batches: BATCHES, results }));
