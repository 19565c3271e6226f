/**
 * bench:auth (issue 3): throughput of authenticated requests as a ratio of the unauthenticated
 * GET /healthz on the same server in the same run: GET /auth/me with a JWT (session check +
 * two reads) and GET /auth/test-api-key with an API key (both header forms). Key lookups and
 * sessions are cached; hashing happens only at login and key creation.
 * Usage: npm run bench:auth [-- --seconds 5 --rounds 3 --connections 64]
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

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-auth-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const server = await startServer(
  'src/server.ts',
  { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'bench.db')}`, LOG_LEVEL: 'info' },
  port,
);

async function post(url: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${url} → ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

const results: Record<string, LoadResult[]> = { healthz: [], jwtMe: [], apiKeyBearer: [], apiKeyHeader: [] };
try {
  await post('/api/v1/auth/register', { email: 'bench@example.com', password: 'bench password' });
  const pair = await post('/api/v1/auth/login', { email: 'bench@example.com', password: 'bench password' });
  const jwt = String(pair.access_token);
  const created = await post('/api/v1/account/api-keys', { name: 'bench', scopes: ['*'] }, jwt);
  const key = String(created.key);
  const cases: Record<string, Parameters<typeof load>[0]> = {
    healthz: { url: `${base}/healthz`, serverPid: server.pid },
    jwtMe: {
      url: `${base}/api/v1/auth/me`,
      headers: { authorization: `Bearer ${jwt}` },
      serverPid: server.pid,
    },
    apiKeyBearer: {
      url: `${base}/api/v1/auth/test-api-key`,
      headers: { authorization: `Bearer ${key}` },
      serverPid: server.pid,
    },
    apiKeyHeader: {
      url: `${base}/api/v1/auth/test-api-key`,
      headers: { 'x-api-key': key },
      serverPid: server.pid,
    },
  };
  for (const c of Object.values(cases)) await load({ ...c, connections, seconds: 1 });
  for (let round = 0; round < rounds; round++) {
    for (const [name, c] of Object.entries(cases))
      results[name]?.push(await load({ ...c, connections, seconds }));
  }
} finally {
  await stopServer(server);
  fs.rmSync(dir, { recursive: true, force: true });
}

const s = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, summarize(v)])) as Record<
  string,
  LoadResult
>;
const get = (name: string): LoadResult =>
  s[name] ?? { rps: 0, cpuUsPerReq: 0, p50: 0, p99: 0, non2xx: 0, errors: 0 };
const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
const figures = {
  bench: 'auth',
  connections,
  seconds_per_run: seconds,
  rounds,
  healthz_rps: get('healthz').rps,
  jwt_me_rps: get('jwtMe').rps,
  api_key_bearer_rps: get('apiKeyBearer').rps,
  api_key_header_rps: get('apiKeyHeader').rps,
  jwt_ratio: ratio(get('jwtMe').rps, get('healthz').rps),
  api_key_ratio: ratio(get('apiKeyBearer').rps, get('healthz').rps),
  api_key_header_ratio: ratio(get('apiKeyHeader').rps, get('healthz').rps),
  healthz_cpu_us: get('healthz').cpuUsPerReq,
  jwt_me_cpu_us: get('jwtMe').cpuUsPerReq,
  api_key_cpu_us: get('apiKeyBearer').cpuUsPerReq,
  jwt_cpu_ratio: ratio(get('healthz').cpuUsPerReq, get('jwtMe').cpuUsPerReq),
  api_key_cpu_ratio: ratio(get('healthz').cpuUsPerReq, get('apiKeyBearer').cpuUsPerReq),
  target_ratio: 0.8,
  non2xx: Object.values(s).reduce((n, r) => n + r.non2xx, 0),
};
console.log(`bench:auth — ${connections} connections, ${rounds} rounds × ${seconds} s, medians`);
for (const [label, name] of [
  ['GET /healthz (no auth)', 'healthz'],
  ['GET /auth/me (JWT)', 'jwtMe'],
  ['GET /auth/test-api-key (Bearer key)', 'apiKeyBearer'],
  ['GET /auth/test-api-key (X-API-Key)', 'apiKeyHeader'],
] as const) {
  const r = get(name);
  console.log(
    `${label.padEnd(38)} ${String(r.rps).padStart(7)} req/s  ${String(r.cpuUsPerReq).padStart(6)} µs CPU/req  p50 ${r.p50} ms  p99 ${r.p99} ms`,
  );
}
console.log(
  `ratio to /healthz: JWT ${figures.jwt_ratio}, API key ${figures.api_key_ratio} / ${figures.api_key_header_ratio} (target ≥ 0.8)`,
);
console.log(JSON.stringify(figures));
