/**
 * bench:deliver (ADR 010): webhook delivery end to end, server in a child process, receivers in
 * this one (loopback, keep-alive).
 *  1. Latency: locations posted at a sustained rate (default 1,000 events/s, in batches every
 *     10 ms), each producing one event and one delivery; time from sending the location to the
 *     webhook request arriving at the receiver, p50/p99 (after a one-second warm-up).
 *  2. Throughput: with the server's worker off (RUN_WORKER=false), events fanned out to 50 webhooks
 *     pile up in the outbox; then a `src/worker.ts` process starts and dispatches and delivers them
 *     all to a fast receiver: deliveries/s and worker CPU µs per delivery.
 * SQLite by default; `-- --postgres` runs both on a fresh PostgreSQL database as well.
 * Usage: npm run bench:deliver [-- --seconds 10 --rate 1000 --deliveries 30000 --postgres]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { freePort, percentile, processCpuMs, startServer, stopServer } from './support/load.ts';
import { createBenchDatabase, dropBenchDatabase } from './support/postgres.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rate: { type: 'string', default: '1000' },
    deliveries: { type: 'string', default: '30000' },
    postgres: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.seconds);
const RATE = Number(values.rate);
const DELIVERIES = Number(values.deliveries);
const TICK_MS = 10;
const LATENCY_WEBHOOKS = 20;
const THROUGHPUT_WEBHOOKS = 50;

interface Receiver {
  url: string;
  count: number;
  onRequest: (body: Buffer) => void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const server = http.createServer({ keepAliveTimeout: 30_000 });
  const receiver: Receiver = {
    url: '',
    count: 0,
    onRequest: () => {},
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.count += 1;
      receiver.onRequest(Buffer.concat(chunks));
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

async function api<T>(base: string, method: string, url: string, token?: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}/api/v1${url}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

interface Target {
  name: 'sqlite' | 'postgres';
  url(dir: string, tag: string): string;
  cleanup(tag: string): void;
}

const SQLITE: Target = {
  name: 'sqlite',
  url: (dir, tag) => `sqlite:${path.join(dir, `${tag}.db`)}`,
  cleanup: () => {},
};

const POSTGRES: Target = {
  name: 'postgres',
  url: (_dir, tag) => createBenchDatabase(`bench_deliver_${tag}_${process.pid}`),
  cleanup: (tag) => dropBenchDatabase(`bench_deliver_${tag}_${process.pid}`),
};

const SERVER_ENV = {
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  // Unlimited event quota: the bench must measure delivery, not the plan's throttle.
  DEFAULT_PLAN: 'enterprise',
};

async function setUp(base: string, receiverUrl: string, webhooks: number, filtered: boolean) {
  await api(base, 'POST', '/auth/register', undefined, {
    email: 'bench@example.com',
    password: 'bench password',
  });
  const { access_token: token } = await api<{ access_token: string }>(
    base,
    'POST',
    '/auth/login',
    undefined,
    {
      email: 'bench@example.com',
      password: 'bench password',
    },
  );
  await api(base, 'GET', '/subscriptions/current', token).catch(() => undefined);
  const fences: Array<[number, number]> = [];
  for (let i = 0; i < webhooks; i++) {
    const center: [number, number] = [10 + i * 0.1, 50];
    const geofence = await api<{ id: string }>(base, 'POST', '/geofences', token, {
      name: `fence ${i}`,
      geometry: { type: 'Circle', coordinates: center, radius: 500 },
    });
    fences.push(center);
    await api(base, 'POST', '/webhooks', token, {
      name: `hook ${i}`,
      url: receiverUrl,
      rate_limit_per_minute: 10000,
      ...(filtered ? { geofence_ids: [geofence.id] } : {}),
    });
  }
  return { token, fences };
}

/** Locations of `devices` devices, each alternating inside/outside its fence: one event each. */
function makeBatch(fences: Array<[number, number]>, seq: { n: number }, count: number, sentAt: number) {
  const locations = [];
  for (let k = 0; k < count; k++) {
    const n = seq.n++;
    const device = n % 1000;
    const visit = Math.floor(n / 1000);
    const fence = fences[device % fences.length] as [number, number];
    const inside = visit % 2 === 0;
    locations.push({
      device_external_id: `d${device}`,
      coordinates: inside ? fence : [fence[0], fence[1] + 1],
      timestamp: new Date(Date.parse('2026-01-01T00:00:00Z') + visit * 1000).toISOString(),
      metadata: { sent: sentAt },
    });
  }
  return { locations };
}

async function latencyRun(target: Target, dir: string) {
  const receiver = await startReceiver();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = await startServer(
    'src/server.ts',
    { ...SERVER_ENV, DATA_DIR: dir, DATABASE_URL: target.url(dir, 'latency') },
    port,
  );
  try {
    const { token, fences } = await setUp(base, receiver.url, LATENCY_WEBHOOKS, true);
    const latencies: number[] = [];
    const startAt = performance.now();
    receiver.onRequest = (body) => {
      const sent = (
        JSON.parse(body.toString('utf8')) as { data: { metadata: { event_metadata: { sent: number } } } }
      ).data.metadata.event_metadata.sent;
      if (sent - startAt >= 1000) latencies.push(performance.now() - sent);
    };
    const seq = { n: 0 };
    const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000));
    const ticks = Math.round((SECONDS * 1000) / TICK_MS);
    const cpuBefore = processCpuMs(server.pid);
    const inFlight: Promise<unknown>[] = [];
    const ingestTimes: number[] = [];
    for (let tick = 0; tick < ticks; tick++) {
      const due = startAt + tick * TICK_MS;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const sentAt = performance.now();
      inFlight.push(
        api(base, 'POST', '/locations/batch', token, makeBatch(fences, seq, perTick, sentAt)).then(() =>
          ingestTimes.push(performance.now() - sentAt),
        ),
      );
    }
    await Promise.all(inFlight);
    const sentEvents = seq.n;
    const deadline = performance.now() + 30_000;
    while (receiver.count < sentEvents && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const elapsedS = (performance.now() - startAt) / 1000;
    const cpuMs = (processCpuMs(server.pid) ?? 0) - (cpuBefore ?? 0);
    return {
      ingest_p50_ms: round(percentile(ingestTimes, 50)),
      events_sent: sentEvents,
      deliveries_received: receiver.count,
      achieved_events_per_s: round(sentEvents / SECONDS),
      p50_ms: round(percentile(latencies, 50)),
      p99_ms: round(percentile(latencies, 99)),
      server_cpu_us_per_event: round((cpuMs * 1000) / Math.max(1, sentEvents), 0),
      elapsed_s: round(elapsedS),
    };
  } finally {
    await stopServer(server);
    await receiver.close();
    target.cleanup('latency');
  }
}

async function throughputRun(target: Target, dir: string) {
  const receiver = await startReceiver();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const databaseUrl = target.url(dir, 'throughput');
  const server = await startServer(
    'src/server.ts',
    { ...SERVER_ENV, DATA_DIR: dir, DATABASE_URL: databaseUrl, RUN_WORKER: 'false' },
    port,
  );
  let worker: ChildProcess | undefined;
  try {
    const { token, fences } = await setUp(base, receiver.url, THROUGHPUT_WEBHOOKS, false);
    const events = Math.ceil(DELIVERIES / THROUGHPUT_WEBHOOKS);
    const seq = { n: 0 };
    for (let done = 0; done < events; done += 1000) {
      await api(
        base,
        'POST',
        '/locations/batch',
        token,
        makeBatch(fences, seq, Math.min(1000, events - done), 0),
      );
    }
    const expected = events * THROUGHPUT_WEBHOOKS;
    let last = 0;
    receiver.onRequest = () => {
      last = performance.now();
    };
    const started = performance.now();
    worker = spawn(process.execPath, ['src/worker.ts'], {
      env: { ...process.env, ...SERVER_ENV, DATA_DIR: dir, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const deadline = started + 120_000;
    while (receiver.count < expected && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const cpuMs = processCpuMs(worker.pid) ?? 0;
    const seconds = (last - started) / 1000;
    return {
      deliveries: receiver.count,
      expected,
      deliveries_per_s: round(receiver.count / seconds, 0),
      seconds: round(seconds, 2),
      worker_cpu_us_per_delivery: round((cpuMs * 1000) / Math.max(1, receiver.count), 0),
    };
  } finally {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker?.once('exit', resolve));
      worker.kill('SIGTERM');
      await exited;
    }
    await stopServer(server);
    await receiver.close();
    target.cleanup('throughput');
  }
}

async function main(): Promise<void> {
  const figures: Record<string, unknown> = { rate_target_events_per_s: RATE, cpus: os.cpus().length };
  for (const target of values.postgres ? [SQLITE, POSTGRES] : [SQLITE]) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-deliver-'));
    try {
      const latency = await latencyRun(target, dir);
      process.stdout.write(
        `[${target.name}] location → webhook at ${latency.achieved_events_per_s} events/s: p50 ${latency.p50_ms} ms, ` +
          `p99 ${latency.p99_ms} ms; ingestion answered in p50 ${latency.ingest_p50_ms} ms (${latency.deliveries_received}/${latency.events_sent} delivered, ` +
          `server ${latency.server_cpu_us_per_event} µs CPU per event)\n`,
      );
      const throughput = await throughputRun(target, dir);
      process.stdout.write(
        `[${target.name}] throughput: ${throughput.deliveries}/${throughput.expected} deliveries in ${throughput.seconds} s = ` +
          `${throughput.deliveries_per_s} deliveries/s (worker ${throughput.worker_cpu_us_per_delivery} µs CPU per delivery)\n`,
      );
      figures[target.name] = { latency, throughput };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
