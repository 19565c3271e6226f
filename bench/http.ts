/**
 * bench:http (issue 2): GET /healthz and a small JSON POST through the full stack (validation,
 * error handler, auth hook, metrics, one log line per request at info, a database read) against a
 * bare Fastify hello-world started in the same run. Servers run in their own processes; rounds
 * alternate between them so machine noise hits both alike; medians are reported.
 * Usage: npm run bench:http [-- --seconds 5 --rounds 3 --connections 64]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, type LoadResult, load, startServer, stopServer, summarize } from './support/load.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-http-'));
const barePort = await freePort();
const fullPort = await freePort();
const bare = await startServer('bench/support/bare-fastify.ts', {}, barePort);
const full = await startServer(
  'src/server.ts',
  {
    DATA_DIR: dir,
    DATABASE_URL: `sqlite:${path.join(dir, 'bench.db')}`,
    LOG_LEVEL: 'info',
    LOGIN_RATE_LIMIT: '1000000/min',
  },
  fullPort,
);

const smallBody = JSON.stringify({ email: 'nobody@example.com' });
const cases = {
  bareGet: { url: `http://127.0.0.1:${barePort}/healthz` },
  fullGet: { url: `http://127.0.0.1:${fullPort}/healthz` },
  barePost: { url: `http://127.0.0.1:${barePort}/echo`, method: 'POST' as const, body: smallBody },
  // Validation + handler + one indexed SELECT + the 202 path; a real route of the API.
  fullPost: {
    url: `http://127.0.0.1:${fullPort}/api/v1/auth/password-reset/request`,
    method: 'POST' as const,
    body: smallBody,
  },
};
const results: Record<keyof typeof cases, LoadResult[]> = {
  bareGet: [],
  fullGet: [],
  barePost: [],
  fullPost: [],
};

try {
  // Warm-up: JIT, statement cache, connection pools.
  for (const c of Object.values(cases)) await load({ ...c, connections, seconds: 1 });
  for (let round = 0; round < rounds; round++) {
    for (const [name, c] of Object.entries(cases) as Array<
      [keyof typeof cases, (typeof cases)[keyof typeof cases]]
    >) {
      results[name].push(await load({ ...c, connections, seconds }));
    }
  }
} finally {
  await stopServer(bare);
  await stopServer(full);
  fs.rmSync(dir, { recursive: true, force: true });
}

const s = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, summarize(v)])) as Record<
  keyof typeof cases,
  LoadResult
>;
const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
const figures = {
  bench: 'http',
  connections,
  seconds_per_run: seconds,
  rounds,
  bare_get_rps: s.bareGet.rps,
  full_get_rps: s.fullGet.rps,
  full_get_p50_ms: s.fullGet.p50,
  full_get_p99_ms: s.fullGet.p99,
  bare_post_rps: s.barePost.rps,
  full_post_rps: s.fullPost.rps,
  full_post_p50_ms: s.fullPost.p50,
  full_post_p99_ms: s.fullPost.p99,
  get_ratio: ratio(s.fullGet.rps, s.bareGet.rps),
  post_ratio: ratio(s.fullPost.rps, s.barePost.rps),
  target_ratio: 0.7,
  non2xx: s.fullGet.non2xx + s.fullPost.non2xx + s.bareGet.non2xx + s.barePost.non2xx,
  errors: s.fullGet.errors + s.fullPost.errors + s.bareGet.errors + s.barePost.errors,
};
const line = (label: string, r: LoadResult) =>
  `${label.padEnd(34)} ${String(r.rps).padStart(7)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms`;
console.log(`bench:http — ${connections} connections, ${rounds} rounds × ${seconds} s, medians`);
console.log(line('bare Fastify GET /healthz', s.bareGet));
console.log(line('full stack GET /healthz', s.fullGet));
console.log(line('bare Fastify POST /echo', s.barePost));
console.log(line('full stack POST password-reset', s.fullPost));
console.log(`ratio full/bare: GET ${figures.get_ratio}, POST ${figures.post_ratio} (target ≥ 0.7)`);
console.log(JSON.stringify(figures));
