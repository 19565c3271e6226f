/**
 * bench:http (ADR 012): the full stack against a bare Fastify hello-world started in the same run.
 *  - GET /healthz on both.
 *  - A small JSON POST through validation, the error handler and logging at info: POST
 *    /api/v1/auth/register with a body that breaks one rule (→ 422 detail array). Two references:
 *    bare Fastify validating the same body with the same schema and answering with its default
 *    error (400) — like for like, the ratio the target is judged on (ADR 012) — and a bare POST that
 *    echoes its body without validating (the original reference, still printed). None touches
 *    storage, so the ratios are the stack's overhead.
 * Servers run in their own processes and rounds alternate between them. Two figures per case:
 * req/s (what the target names; sensitive to other load on a shared machine) and the server's
 * CPU µs per request from /proc (robust to that noise). Medians of the rounds.
 * Usage: npm run bench:http [-- --seconds 5 --rounds 3 --connections 64]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  freePort,
  type LoadRequest,
  type LoadResult,
  load,
  startServer,
  stopServer,
  summarize,
} from './support/load.ts';

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
  { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'bench.db')}`, LOG_LEVEL: 'info' },
  fullPort,
);

const invalidRegistration = JSON.stringify({ email: 'someone@example.com', password: 'short' });
const cases = {
  bareGet: { url: `http://127.0.0.1:${barePort}/healthz`, serverPid: bare.pid },
  fullGet: { url: `http://127.0.0.1:${fullPort}/healthz`, serverPid: full.pid },
  barePost: {
    url: `http://127.0.0.1:${barePort}/echo`,
    method: 'POST',
    body: invalidRegistration,
    serverPid: bare.pid,
  },
  barePostValidating: {
    url: `http://127.0.0.1:${barePort}/register`,
    method: 'POST',
    body: invalidRegistration,
    serverPid: bare.pid,
  },
  fullPost: {
    url: `http://127.0.0.1:${fullPort}/api/v1/auth/register`,
    method: 'POST',
    body: invalidRegistration,
    serverPid: full.pid,
  },
} satisfies Record<string, LoadRequest>;
type CaseName = keyof typeof cases;
const results: Record<CaseName, LoadResult[]> = {
  bareGet: [],
  fullGet: [],
  barePost: [],
  barePostValidating: [],
  fullPost: [],
};

try {
  // Warm-up: JIT, statement cache.
  for (const c of Object.values(cases)) await load({ ...c, connections, seconds: 1 });
  for (let round = 0; round < rounds; round++) {
    for (const name of Object.keys(cases) as CaseName[])
      results[name].push(await load({ ...cases[name], connections, seconds }));
  }
} finally {
  await stopServer(bare);
  await stopServer(full);
  fs.rmSync(dir, { recursive: true, force: true });
}

const s = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, summarize(v)])) as Record<
  CaseName,
  LoadResult
>;
const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1000) / 1000 : 0);
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
  bare_post_validating_rps: s.barePostValidating.rps,
  full_post_rps: s.fullPost.rps,
  full_post_p50_ms: s.fullPost.p50,
  full_post_p99_ms: s.fullPost.p99,
  bare_get_cpu_us: s.bareGet.cpuUsPerReq,
  full_get_cpu_us: s.fullGet.cpuUsPerReq,
  bare_post_cpu_us: s.barePost.cpuUsPerReq,
  bare_post_validating_cpu_us: s.barePostValidating.cpuUsPerReq,
  full_post_cpu_us: s.fullPost.cpuUsPerReq,
  get_ratio: ratio(s.fullGet.rps, s.bareGet.rps),
  post_ratio: ratio(s.fullPost.rps, s.barePost.rps),
  post_validating_ratio: ratio(s.fullPost.rps, s.barePostValidating.rps),
  get_cpu_ratio: ratio(s.bareGet.cpuUsPerReq, s.fullGet.cpuUsPerReq),
  post_cpu_ratio: ratio(s.barePost.cpuUsPerReq, s.fullPost.cpuUsPerReq),
  post_validating_cpu_ratio: ratio(s.barePostValidating.cpuUsPerReq, s.fullPost.cpuUsPerReq),
  target_ratio: 0.7,
  unexpected_status: s.bareGet.non2xx + s.fullGet.non2xx + s.barePost.non2xx,
  errors: Object.values(s).reduce((n, r) => n + r.errors, 0),
};
const line = (label: string, r: LoadResult) =>
  `${label.padEnd(40)} ${String(r.rps).padStart(7)} req/s  ${String(r.cpuUsPerReq).padStart(6)} µs CPU/req  p50 ${r.p50} ms  p99 ${r.p99} ms`;
console.log(`bench:http — ${connections} connections, ${rounds} rounds × ${seconds} s, medians`);
console.log(line('bare Fastify GET /healthz', s.bareGet));
console.log(line('full stack GET /healthz', s.fullGet));
console.log(line('bare Fastify POST /echo', s.barePost));
console.log(line('bare Fastify POST /register → 400', s.barePostValidating));
console.log(line('full stack POST /auth/register → 422', s.fullPost));
console.log(
  `full/bare throughput: GET ${figures.get_ratio}, POST vs validating ${figures.post_validating_ratio} (vs echo ${figures.post_ratio})`,
);
console.log(
  `by CPU per request:   GET ${figures.get_cpu_ratio}, POST vs validating ${figures.post_validating_cpu_ratio} (vs echo ${figures.post_cpu_ratio}) — target ≥ 0.7`,
);
console.log(JSON.stringify(figures));
