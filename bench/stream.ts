/**
 * bench:stream (ADR 016), on a server process over real HTTP, SQLite and (with --postgres)
 * PostgreSQL:
 *  - GET /devices/positions with 10,000 located devices (`--devices`): latency of the whole answer
 *    (request to last byte), median and p95 of `--requests` sequential calls after a warm-up, and
 *    its size.
 *  - Batch ingestion (1,000 locations a batch) with one stream of the workspace open against none,
 *    alternating passes: server CPU per 1,000 locations, and how long after a batch's answer its
 *    1,000 `location` messages have arrived on the stream.
 * Usage: npm run bench:stream [-- --postgres --devices 10000 --requests 30 --passes 6 --batches 10]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
// @ts-expect-error: the shared workload generator is plain JavaScript without types.
import { fences, points } from '../../shared/bench/dataset.mjs';
import { api, apiKeyAccount, pool } from './support/ingest-api.ts';
import {
  freePort,
  median,
  percentile,
  processCpuMs,
  round,
  startServer,
  stopServer,
} from './support/load.ts';
import { createBenchDatabase, dropBenchDatabase } from './support/postgres.ts';

const { values } = parseArgs({
  options: {
    postgres: { type: 'boolean', default: false },
    devices: { type: 'string', default: '10000' },
    fences: { type: 'string', default: '2000' },
    requests: { type: 'string', default: '30' },
    passes: { type: 'string', default: '6' },
    batches: { type: 'string', default: '10' },
  },
});
const DEVICES = Number(values.devices);
const FENCES = Number(values.fences);
const REQUESTS = Number(values.requests);
const PASSES = Number(values.passes);
const BATCHES = Number(values.batches);

type Fence = { id: number; geometry: unknown };
const fenceRows = (fences as (n: number, seed: number) => Fence[])(FENCES, 1);
const queryPoints = (points as (n: number, seed: number) => Array<[number, number]>)(200_000, 2);

interface Figures {
  database: string;
  positions_devices: number;
  positions_bytes: number;
  positions_p50_ms: number;
  positions_p95_ms: number;
  positions_max_ms: number;
  /** Server CPU per 1,000 batch locations, no stream open / one stream open (medians of passes). */
  cpu_ms_per_1000_unwatched: number;
  cpu_ms_per_1000_watched: number;
  /** From a batch's answer until its last `location` message arrived on the stream. */
  delivery_after_answer_p50_ms: number;
  delivery_after_answer_p95_ms: number;
}

/** A minimal SSE reader: counts `location` messages and wakes whoever waits for a count. */
class LocationCounter {
  count = 0;
  #waiters: Array<{ target: number; resolve: () => void }> = [];
  readonly #abort = new AbortController();
  readonly done: Promise<void>;
  /** Resolves on the stream's `ready` message. */
  readonly ready: Promise<void>;
  #onReady: () => void = () => {};

  constructor(url: string, auth: Record<string, string>) {
    this.ready = new Promise((resolve) => {
      this.#onReady = resolve;
    });
    this.done = (async () => {
      const res = await fetch(url, { headers: auth, signal: this.#abort.signal });
      if (res.status !== 200 || !res.body) throw new Error(`stream → ${res.status}`);
      const decoder = new TextDecoder();
      let carry = '';
      try {
        for await (const chunk of res.body) {
          const text = carry + decoder.decode(chunk as Uint8Array, { stream: true });
          const lines = text.split('\n');
          carry = lines.pop() ?? '';
          for (const line of lines) {
            if (line === 'event: location') this.count++;
            else if (line === 'event: ready') this.#onReady();
          }
          const due = this.#waiters.filter((w) => w.target <= this.count);
          this.#waiters = this.#waiters.filter((w) => w.target > this.count);
          for (const w of due) w.resolve();
        }
      } catch {
        // aborted
      }
    })();
  }

  until(target: number): Promise<void> {
    if (this.count >= target) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ target, resolve }));
  }

  close(): Promise<void> {
    this.#abort.abort();
    return this.done;
  }
}

async function runOn(database: 'sqlite' | 'postgres'): Promise<Figures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-stream-'));
  const pgName = `bench_stream_${process.pid}`;
  const databaseUrl =
    database === 'postgres' ? createBenchDatabase(pgName) : `sqlite:${path.join(dir, 'stream.db')}`;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = await startServer(
    'src/server.ts',
    { DATA_DIR: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' },
    port,
  );
  try {
    const auth = await apiKeyAccount(base, 'stream-bench@example.com');
    await pool(fenceRows, 8, async (f) => {
      await api(base, 'POST', '/geofences', { name: `fence ${f.id}`, geometry: f.geometry }, auth);
    });
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    let batchNo = 0;
    const nextBatch = () => {
      const b = batchNo++;
      return {
        locations: Array.from({ length: 1000 }, (_, i) => {
          const n = b * 1000 + i;
          const [lng, lat] = queryPoints[n % queryPoints.length] as [number, number];
          return {
            device_external_id: `dev-${n % DEVICES}`,
            coordinates: [lng, lat],
            accuracy: 5,
            timestamp: new Date(t0 + b * 1000).toISOString(),
          };
        }),
      };
    };
    for (let i = 0; i < Math.ceil(DEVICES / 1000); i++)
      await api(base, 'POST', '/locations/batch', nextBatch(), auth);

    // The snapshot.
    const times: number[] = [];
    let bytes = 0;
    let count = 0;
    for (let i = 0; i < REQUESTS + 5; i++) {
      const started = performance.now();
      const res = await fetch(`${base}/api/v1/devices/positions`, { headers: auth });
      const body = await res.text();
      const took = performance.now() - started;
      if (res.status !== 200) throw new Error(`positions → ${res.status}`);
      if (i >= 5) times.push(took);
      bytes = Buffer.byteLength(body);
      count = (JSON.parse(body) as { features: unknown[] }).features.length;
    }

    // Ingestion with and without a stream open, alternating passes.
    const unwatched: number[] = [];
    const watched: number[] = [];
    const delivery: number[] = [];
    for (let pass = 0; pass < PASSES * 2; pass++) {
      const watching = pass % 2 === 1;
      const stream = watching
        ? new LocationCounter(`${base}/api/v1/stream?topics=locations`, auth)
        : undefined;
      await stream?.ready;
      const cpuBefore = processCpuMs(server.pid) ?? 0;
      let expected = 0;
      for (let b = 0; b < BATCHES; b++) {
        await api(base, 'POST', '/locations/batch', nextBatch(), auth);
        if (stream) {
          const answered = performance.now();
          expected += 1000;
          await stream.until(expected);
          delivery.push(performance.now() - answered);
        }
      }
      const cpu = ((processCpuMs(server.pid) ?? 0) - cpuBefore) / BATCHES;
      (watching ? watched : unwatched).push(cpu);
      await stream?.close();
    }
    return {
      database,
      positions_devices: count,
      positions_bytes: bytes,
      positions_p50_ms: round(median(times)),
      positions_p95_ms: round(percentile(times, 95)),
      positions_max_ms: round(Math.max(...times)),
      cpu_ms_per_1000_unwatched: round(median(unwatched)),
      cpu_ms_per_1000_watched: round(median(watched)),
      delivery_after_answer_p50_ms: round(median(delivery)),
      delivery_after_answer_p95_ms: round(percentile(delivery, 95)),
    };
  } finally {
    await stopServer(server);
    fs.rmSync(dir, { recursive: true, force: true });
    if (database === 'postgres') dropBenchDatabase(pgName);
  }
}

const results: Figures[] = [await runOn('sqlite')];
if (values.postgres) results.push(await runOn('postgres'));
for (const r of results) {
  console.log(
    `${r.database.padEnd(9)} GET /devices/positions, ${r.positions_devices} devices (${round(r.positions_bytes / 1e6, 2)} MB): ` +
      `p50 ${r.positions_p50_ms} ms, p95 ${r.positions_p95_ms} ms, max ${r.positions_max_ms} ms; ` +
      `batch ingestion CPU ${r.cpu_ms_per_1000_unwatched} ms per 1,000 unwatched, ${r.cpu_ms_per_1000_watched} ms with one stream open; ` +
      `the batch's 1,000 location messages on the stream ${r.delivery_after_answer_p50_ms} ms (p95 ${r.delivery_after_answer_p95_ms} ms) after its answer`,
  );
}
console.log('target: positions of 10,000 devices well under 300 ms');
console.log(JSON.stringify({ bench: 'stream', devices: DEVICES, fences: FENCES, results }));
