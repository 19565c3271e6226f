/**
 * bench:stream (ADR 016), on a server process over real HTTP, SQLite and (with --postgres)
 * PostgreSQL:
 *  - GET /devices/positions with 10,000 located devices (`--devices`): latency of the whole answer
 *    (request to last byte), median and p95 of `--requests` sequential calls after a warm-up, the
 *    server's CPU time per answer (/proc, 10 ms ticks: a mean over the calls), and its size.
 *  - Batch ingestion (1,000 locations a batch) with no stream of the workspace open, with one open
 *    on the same server, and (PostgreSQL: a second server on the same database, LISTEN/NOTIFY
 *    between them) with one open on the other server, in alternating passes: the ingesting
 *    server's CPU per 1,000 locations, and how long after a batch's answer its 1,000 `location`
 *    messages have arrived on the stream.
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
  /** The server's CPU time per answer: what the machine's other load does not inflate. */
  positions_server_cpu_ms: number;
  /** The ingesting server's CPU per 1,000 batch locations (medians of passes). */
  cpu_ms_per_1000: Record<Watch, number>;
  /** From a batch's answer until its last `location` message arrived on the stream. */
  delivery_after_answer_ms: Partial<Record<Watch, { p50: number; p95: number }>>;
}

/** Nobody watches; a stream on the ingesting server; a stream on the other server. */
type Watch = 'none' | 'local' | 'remote';

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
  // On PostgreSQL a second node on the same database, for a stream watched from elsewhere.
  const otherPort = await freePort();
  const otherBase = `http://127.0.0.1:${otherPort}`;
  const other =
    database === 'postgres'
      ? await startServer(
          'src/server.ts',
          { DATA_DIR: dir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', DEFAULT_PLAN: 'enterprise' },
          otherPort,
        )
      : undefined;
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
    let serverCpuMs = 0;
    for (let i = 0; i < REQUESTS + 5; i++) {
      const cpuBefore = processCpuMs(server.pid) ?? 0;
      const started = performance.now();
      const res = await fetch(`${base}/api/v1/devices/positions`, { headers: auth });
      const body = await res.text();
      const took = performance.now() - started;
      if (res.status !== 200) throw new Error(`positions → ${res.status}`);
      if (i >= 5) {
        times.push(took);
        serverCpuMs += (processCpuMs(server.pid) ?? 0) - cpuBefore;
      }
      bytes = Buffer.byteLength(body);
      count = (JSON.parse(body) as { features: unknown[] }).features.length;
    }

    // Ingestion watched by nobody, by a stream here, by a stream on the other node; alternating.
    const watches: Watch[] = other ? ['none', 'local', 'remote'] : ['none', 'local'];
    const cpu: Record<Watch, number[]> = { none: [], local: [], remote: [] };
    const delivery: Record<Watch, number[]> = { none: [], local: [], remote: [] };
    for (let pass = 0; pass < PASSES * watches.length; pass++) {
      const watch = watches[pass % watches.length] as Watch;
      const streamBase = watch === 'remote' ? otherBase : base;
      const stream =
        watch === 'none'
          ? undefined
          : new LocationCounter(`${streamBase}/api/v1/stream?topics=locations`, auth);
      await stream?.ready;
      // The ingesting node hears of a remote stream a moment after `ready`: untimed batches until
      // messages arrive, then until the count stands still.
      while (stream && stream.count === 0) {
        await api(base, 'POST', '/locations/batch', nextBatch(), auth);
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      for (let last = -1; stream && last !== stream.count; ) {
        last = stream.count;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const cpuBefore = processCpuMs(server.pid) ?? 0;
      let expected = stream?.count ?? 0;
      for (let b = 0; b < BATCHES; b++) {
        await api(base, 'POST', '/locations/batch', nextBatch(), auth);
        if (stream) {
          const answered = performance.now();
          expected += 1000;
          await stream.until(expected);
          delivery[watch].push(performance.now() - answered);
        }
      }
      cpu[watch].push(((processCpuMs(server.pid) ?? 0) - cpuBefore) / BATCHES);
      await stream?.close();
    }
    const latency = (w: Watch) =>
      delivery[w].length > 0
        ? { p50: round(median(delivery[w])), p95: round(percentile(delivery[w], 95)) }
        : undefined;
    return {
      database,
      positions_devices: count,
      positions_bytes: bytes,
      positions_p50_ms: round(median(times)),
      positions_p95_ms: round(percentile(times, 95)),
      positions_max_ms: round(Math.max(...times)),
      positions_server_cpu_ms: round(serverCpuMs / REQUESTS),
      cpu_ms_per_1000: {
        none: round(median(cpu.none)),
        local: round(median(cpu.local)),
        remote: cpu.remote.length > 0 ? round(median(cpu.remote)) : Number.NaN,
      },
      delivery_after_answer_ms: { local: latency('local'), remote: latency('remote') },
    };
  } finally {
    if (other) await stopServer(other);
    await stopServer(server);
    fs.rmSync(dir, { recursive: true, force: true });
    if (database === 'postgres') dropBenchDatabase(pgName);
  }
}

const results: Figures[] = [await runOn('sqlite')];
if (values.postgres) results.push(await runOn('postgres'));
for (const r of results) {
  const delivered = (w: 'local' | 'remote') => {
    const d = r.delivery_after_answer_ms[w];
    return d ? `${d.p50} ms (p95 ${d.p95})` : 'n/a';
  };
  console.log(
    `${r.database.padEnd(9)} GET /devices/positions, ${r.positions_devices} devices (${round(r.positions_bytes / 1e6, 2)} MB): ` +
      `p50 ${r.positions_p50_ms} ms, p95 ${r.positions_p95_ms} ms, max ${r.positions_max_ms} ms (request to last byte); ` +
      `server CPU ${r.positions_server_cpu_ms} ms per answer`,
  );
  console.log(
    `${r.database.padEnd(9)} batch ingestion, server CPU per 1,000 locations: ${r.cpu_ms_per_1000.none} ms unwatched, ` +
      `${r.cpu_ms_per_1000.local} ms with a stream on this node, ${r.cpu_ms_per_1000.remote} ms with a stream on another node; ` +
      `a batch's 1,000 location messages complete on the stream ${delivered('local')} (this node), ` +
      `${delivered('remote')} (other node) after its answer`,
  );
}
console.log('target: positions of 10,000 devices well under 300 ms');
console.log(JSON.stringify({ bench: 'stream', devices: DEVICES, fences: FENCES, results }));
