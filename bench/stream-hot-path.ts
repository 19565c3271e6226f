/**
 * What the live stream adds to batch ingestion while nobody watches (ADR 016), measured in process
 * where the machine's other load cannot hide a 1 % difference: `ingestLocations` on a SQLite file
 * (1,000 geofences, 1,000 devices, batches of 1,000 locations), with and without `onCommitted`
 * (the stream's hook: the positions handed over, the hub asked and answering "nobody"), the two in
 * alternating runs; the process's CPU time per batch (SQLite runs on this thread, so its work
 * counts).
 * Usage: node bench/stream-hot-path.ts [--batches 40 --rounds 10]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createDeps } from '../src/deps.ts';
import { type IngestContext, ingestLocations } from '../src/locations/ingest.service.ts';
import { ManualClock } from '../src/shared/clock.ts';
import { uuidv7 } from '../src/shared/ids.ts';
import { median, round } from './support/load.ts';

const { values } = parseArgs({
  options: { batches: { type: 'string', default: '40' }, rounds: { type: 'string', default: '10' } },
});
const BATCHES = Number(values.batches);
const ROUNDS = Number(values.rounds);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-stream-hot-'));
const clock = new ManualClock('2026-03-10T12:00:00.000Z');
const config = loadConfig({
  DATABASE_URL: `sqlite:${path.join(dir, 'hot.db')}`,
  DATA_DIR: dir,
  JWT_SECRET: 'bench-jwt-secret-0123456789abcdefghijklmnop',
  ENCRYPTION_KEY: 'bench-encryption-key-0123456789abcdefghijk',
  REDIS_URL: '',
  // No plan limits: the free plan stops at 50 geofences.
  DEFAULT_PLAN: 'enterprise',
});
const deps = await createDeps(config, {
  clock,
  logger: pino({ level: 'silent' }),
  passwordHash: { memoryKiB: 1024, passes: 1, parallelism: 1 },
});
const db = deps.database.db;
const capabilities = deps.database.capabilities;
try {
  const now = clock.now();
  // The workspace and its geofences through the API, as a client makes them.
  const app = await buildApp(deps);
  const json = async (
    method: 'GET' | 'POST',
    url: string,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await app.inject({ method, url: `/api/v1${url}`, payload: body as never, headers });
    if (res.statusCode >= 300) throw new Error(`${method} ${url} → ${res.statusCode} ${res.body}`);
    return res.json() as Record<string, unknown>;
  };
  const account = { email: 'hot@example.com', password: 'bench password' };
  const registered = await json('POST', '/auth/register', account);
  const workspaceId = String((registered.workspace as { id: string }).id);
  const login = await json('POST', '/auth/login', account);
  const auth = { authorization: `Bearer ${String(login.access_token)}` };
  for (let i = 0; i < 1000; i++) {
    const lng = 10 + (i % 40) * 0.05;
    const lat = 50 + Math.floor(i / 40) * 0.05;
    await json(
      'POST',
      '/geofences',
      { name: `fence ${i}`, geometry: { type: 'Circle', coordinates: [lng, lat], radius: 300 } },
      auth,
    );
  }
  await app.close();
  const deviceIds = Array.from({ length: 1000 }, () => uuidv7());
  await db
    .insertInto('devices')
    .values(
      deviceIds.map((id, i) => ({
        id,
        workspace_id: workspaceId,
        name: `device ${i}`,
        external_id: `ext-${i}`,
        user_id: null,
        metadata: '{}',
        inside_geofence_ids: '[]',
        active_session_id: null,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();

  const base: IngestContext = { db, clock, registry: deps.geofenceIndexes, capabilities };
  const watched: IngestContext = { ...base, onCommitted: (c) => deps.streamPublisher.committed(c) };
  let step = 0;
  const batch = () => {
    const s = step++;
    const at = new Date(Date.parse('2026-03-10T11:00:00.000Z') + s * 1000);
    return deviceIds.map((deviceId, ref) => ({
      ref,
      deviceId,
      location: {
        lng: 10 + ((ref * 7 + s) % 80) * 0.025,
        lat: 50 + ((ref * 3 + s) % 50) * 0.025,
        recordedAt: at,
        recordedAtIso: at.toISOString(),
        accuracy: 5,
        speed: null,
        heading: null,
        altitude: null,
        metadata: {},
      },
    }));
  };
  const cpuMs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const run = async (ctx: IngestContext): Promise<number> => {
    const started = cpuMs();
    for (let b = 0; b < BATCHES; b++) await ingestLocations(ctx, workspaceId, batch());
    // The stream's work happens on the next turn: let it run inside the measurement.
    await new Promise((resolve) => setImmediate(resolve));
    return (cpuMs() - started) / BATCHES;
  };
  for (let i = 0; i < 3; i++) await run(base); // warm-up
  const without: number[] = [];
  const withHook: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    without.push(await run(base));
    withHook.push(await run(watched));
  }
  const a = median(without);
  const b = median(withHook);
  console.log(
    `ingestLocations, 1,000 locations a batch, nobody watching: CPU ${round(a, 2)} ms per batch without onCommitted, ` +
      `${round(b, 2)} ms with it (${round(((b - a) / a) * 100, 2)} %), medians of ${ROUNDS} alternating runs of ${BATCHES} batches`,
  );

  console.log(
    JSON.stringify({
      bench: 'stream-hot-path',
      batch_cpu_ms_without_hook: round(a, 3),
      batch_cpu_ms_with_hook: round(b, 3),
    }),
  );
} finally {
  await deps.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
