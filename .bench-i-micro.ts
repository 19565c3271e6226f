// Scratch (not committed): in-process ingestion micro-bench with app.inject, INGEST-10K.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from './src/app.ts';
import { loadConfig } from './src/config.ts';
import { createDeps } from './src/deps.ts';
// @ts-expect-error js
import { fences, points } from '/work/shared/bench/dataset.mjs';
const PG = process.env.PG === '1';
const stmtTimes = new Map<string, [number, number]>();
if (process.env.STMT) {
  const { StatementSync } = await import('node:sqlite');
  for (const m of ['run', 'all'] as const) {
    const orig = StatementSync.prototype[m] as (...a: unknown[]) => unknown;
    (StatementSync.prototype as unknown as Record<string, unknown>)[m] = function (this: InstanceType<typeof StatementSync>, ...a: unknown[]) {
      const s = performance.now(); try { return orig.apply(this, a); } finally { const k = this.sourceSQL.slice(0, 60); const e = stmtTimes.get(k) ?? [0, 0]; e[0] += performance.now() - s; e[1]++; stmtTimes.set(k, e); }
    };
  }
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'micro-'));
let url = `sqlite:${path.join(dir, 'm.db')}`;
const { execFileSync } = await import('node:child_process');
const pgName = `micro_${process.pid}`;
if (PG) { execFileSync('psql', ['-h','127.0.0.1','-U','postgres','-d','test','-qc',`create database ${pgName}`]); url = `postgres://postgres@127.0.0.1:5432/${pgName}`; }
const config = loadConfig({ ...process.env, DATABASE_URL: url, DATA_DIR: dir, LOG_LEVEL: 'warn', JWT_SECRET: 'x'.repeat(40), ENCRYPTION_KEY: 'y'.repeat(40) });
const deps = await createDeps(config);
const app = await buildApp(deps);
await app.ready();
const inj = async (method: string, url: string, body: unknown, headers: Record<string,string> = {}) => {
  const r = await app.inject({ method: method as 'POST', url: `/api/v1${url}`, payload: body as object, headers });
  if (r.statusCode >= 300) throw new Error(`${url} ${r.statusCode} ${r.body.slice(0,200)}`);
  return r.json();
};
await inj('POST', '/auth/register', { email: 'b@example.com', password: 'bench password' });
const pair = await inj('POST', '/auth/login', { email: 'b@example.com', password: 'bench password' });
const key = (await inj('POST', '/account/api-keys', { name: 'b', scopes: ['*'] }, { authorization: `Bearer ${pair.access_token}` })).key;
const auth = { 'x-api-key': key };
console.log('plan', (await app.inject({ method: 'PUT', url: '/api/v1/subscriptions/current', payload: { plan: 'enterprise' }, headers: { authorization: `Bearer ${pair.access_token}` } })).statusCode);
const FENCES = Number(process.env.FENCES ?? 10000);
const fr = fences(FENCES, 1) as Array<{ id: number; geometry: unknown }>;
let t = Date.now();
for (let i = 0; i < fr.length; i += 16) await Promise.all(fr.slice(i, i + 16).map((f) => inj('POST', '/geofences', { name: `f${f.id}`, geometry: f.geometry }, auth)));
console.log('fences', Date.now() - t, 'ms');
const qp = points(200_000, 2) as Array<[number, number]>;
const t0 = Date.parse('2026-01-01T00:00:00Z');
const BATCHES = Number(process.env.BATCHES ?? 60);
const bodies = Array.from({ length: BATCHES }, (_, b) => JSON.stringify({ locations: Array.from({ length: 1000 }, (_, i) => { const n = b * 1000 + i; const [lng, lat] = qp[n % qp.length]!; return { device_external_id: `dev-${n % 10000}`, coordinates: [lng, lat], timestamp: new Date(t0 + b * 1000).toISOString() }; }) }));
const post = (body: string) => app.inject({ method: 'POST', url: '/api/v1/locations/batch', payload: body, headers: { ...auth, 'content-type': 'application/json' } });
for (const b of bodies.slice(0, 10)) { const r = await post(b); if (r.statusCode !== 200) throw new Error(r.body); }
const times: number[] = [];
const { inspector } = { inspector: await import('node:inspector') };
let session: import('node:inspector').Session | undefined;
if (process.env.PROF) { session = new inspector.Session(); session.connect(); await new Promise<void>((r) => session!.post('Profiler.enable', () => session!.post('Profiler.start', () => r()))); }
stmtTimes.clear();
const cpu0 = process.cpuUsage(); t = performance.now();
let events = 0;
for (const b of bodies.slice(10)) { const s = performance.now(); const r = await post(b); if (r.statusCode !== 200) throw new Error(r.body); events += r.json().events.length; times.push(performance.now() - s); }
const wall = performance.now() - t; const cpu = process.cpuUsage(cpu0);
if (session) { await new Promise<void>((r) => session!.post('Profiler.stop', (_e, { profile }) => { fs.writeFileSync(process.env.PROF!, JSON.stringify(profile)); r(); })); }
times.sort((a, b) => a - b);
const n = times.length;
console.log(JSON.stringify({ db: PG ? 'pg' : 'sqlite', batches: n, events, median_ms: +times[n >> 1]!.toFixed(1), p90: +times[Math.floor(n * 0.9)]!.toFixed(1), loc_per_s_wall: Math.round(n * 1000 / (wall / 1000)), cpu_ms_per_batch: +((cpu.user + cpu.system) / 1000 / n).toFixed(1) }));
for (const [k, [ms, c]] of [...stmtTimes].sort((a, b) => b[1][0] - a[1][0]).slice(0, 15)) console.log((ms / 50).toFixed(2).padStart(7), 'ms/batch', String(c).padStart(6), k);
await app.close(); await deps.close();
if (PG) execFileSync('psql', ['-h','127.0.0.1','-U','postgres','-d','test','-qc',`drop database if exists ${pgName} with (force)`]);
fs.rmSync(dir, { recursive: true, force: true });
