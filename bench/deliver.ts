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
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { type BenchTarget, benchTargets } from './support/bench-targets.ts';
import { freePort, percentile, processCpuMs, round, startServer, stopServer } from './support/load.ts';
import { sendAtRate, waitUntil } from './support/paced-sender.ts';
import { startReceiver } from './support/receiver.ts';
import { api, DELIVERY_BENCH_ENV as SERVER_ENV, signUp } from './support/service-api.ts';

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

async function setUp(base: string, receiverUrl: string, webhooks: number, filtered: boolean) {
  const token = await signUp(base, 'bench@example.com');
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

async function latencyRun(target: BenchTarget, dir: string) {
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
    const cpuBefore = processCpuMs(server.pid);
    const run = await sendAtRate({
      rate: RATE,
      seconds: SECONDS,
      tickMs: TICK_MS,
      send: (count, sentAt) =>
        api(base, 'POST', '/locations/batch', token, makeBatch(fences, seq, count, sentAt)),
    });
    const ingestTimes = run.answerMs;
    const sentEvents = seq.n;
    await waitUntil(() => receiver.count >= sentEvents, 30_000);
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

async function throughputRun(target: BenchTarget, dir: string) {
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
    await waitUntil(() => receiver.count >= expected, 120_000);
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
  for (const target of benchTargets('deliver', values.postgres)) {
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
