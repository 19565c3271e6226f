/**
 * bench:auth: throughput of authenticated requests as a ratio of the unauthenticated
 * GET /healthz on the same server in the same run: GET /auth/me with a JWT (session check +
 * two reads) and GET /auth/test-api-key with an API key (both header forms). Key lookups and
 * sessions are cached; hashing happens only at login and key creation.
 *
 * It also measures the cost of the API-key rate limit: the same GET /auth/test-api-key on three more
 * servers that serve nothing else — limit in memory, limit switched off (API_KEY_RATE_LIMITS=false,
 * the baseline) and, when Redis is reachable, limit in Redis (one script call per key per
 * event-loop turn). All servers share one database and key; their runs are interleaved round by
 * round. The plan table gives the free plan
 * a limit no run can reach, so every request takes the full counting path and none is refused.
 * Usage: npm run bench:auth [-- --seconds 5 --rounds 3 --connections 64]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_PLANS } from '../src/billing/plans.ts';
import { dropPrefix, redisReachable } from '../test/helpers/redis.ts';
import { limiterCost } from './support/limiter-cost.ts';
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

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-auth-'));
const plansFile = path.join(dir, 'plans.json');
fs.writeFileSync(
  plansFile,
  JSON.stringify(
    DEFAULT_PLANS.map((p) =>
      p.id === 'free' ? { ...p, limits: { ...p.limits, api_requests_per_hour: 1e12 } } : p,
    ),
  ),
);
const redisPrefix = `bench-auth-${process.pid}-${Date.now()}:`;
const sharedEnv = {
  DATA_DIR: dir,
  DATABASE_URL: `sqlite:${path.join(dir, 'bench.db')}`,
  LOG_LEVEL: 'info',
  PLANS_FILE: plansFile,
};
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const server = await startServer('src/server.ts', sharedEnv, port);
const unlimitedPort = await freePort();
const unlimited = await startServer(
  'src/server.ts',
  { ...sharedEnv, API_KEY_RATE_LIMITS: 'false' },
  unlimitedPort,
);
// The memory-limited twin of the baseline: a server that, like the baseline and the Redis one,
// serves nothing but API-key requests, so the three limit cases get the same treatment (a server
// that also serves /healthz and JWTs has other JIT and heap state; that alone moves the ratios
// more than the limiter costs).
const limitedPort = await freePort();
const limited = await startServer('src/server.ts', sharedEnv, limitedPort);
const withRedis = await redisReachable(REDIS_URL);
const redisPort = await freePort();
const redisServer = withRedis
  ? await startServer('src/server.ts', { ...sharedEnv, REDIS_URL, REDIS_KEY_PREFIX: redisPrefix }, redisPort)
  : undefined;

async function post(url: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${url} → ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

const results: Record<string, LoadResult[]> = {
  healthz: [],
  jwtMe: [],
  apiKeyBearer: [],
  apiKeyHeader: [],
  apiKeyNoLimit: [],
  apiKeyMemory: [],
  apiKeyRedis: [],
};
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
    apiKeyMemory: {
      url: `http://127.0.0.1:${limitedPort}/api/v1/auth/test-api-key`,
      headers: { authorization: `Bearer ${key}` },
      serverPid: limited.pid,
    },
    apiKeyNoLimit: {
      url: `http://127.0.0.1:${unlimitedPort}/api/v1/auth/test-api-key`,
      headers: { authorization: `Bearer ${key}` },
      serverPid: unlimited.pid,
    },
    ...(redisServer
      ? {
          apiKeyRedis: {
            url: `http://127.0.0.1:${redisPort}/api/v1/auth/test-api-key`,
            headers: { authorization: `Bearer ${key}` },
            serverPid: redisServer.pid,
          },
        }
      : {}),
  };
  // Warm-up. The first server's auth path is also warmed by the two key cases that share it, so the
  // other servers' single case gets as much (JIT state would otherwise decide the ratios).
  const warmUp: Record<string, number> = { apiKeyMemory: 4, apiKeyNoLimit: 4, apiKeyRedis: 4 };
  for (const [name, c] of Object.entries(cases))
    await load({ ...c, connections, seconds: warmUp[name] ?? 2 });
  for (let round = 0; round < rounds; round++) {
    // Alternate the order so that no case always runs right after the same neighbour.
    const order = Object.entries(cases);
    if (round % 2 === 1) order.reverse();
    for (const [name, c] of order) results[name]?.push(await load({ ...c, connections, seconds }));
  }
} finally {
  await stopServer(server);
  await stopServer(unlimited);
  await stopServer(limited);
  if (redisServer) await stopServer(redisServer);
}

// The limiter on its own, with the servers stopped: CPU per check in a tight loop.
const memoryCost = await limiterCost({ plansFile, checks: 1_000_000, concurrency: 1 });
const redisCost = withRedis
  ? await limiterCost({ plansFile, redisUrl: REDIS_URL, redisPrefix, checks: 100_000, concurrency: 64 })
  : undefined;
if (withRedis) await dropPrefix(redisPrefix, REDIS_URL);
fs.rmSync(dir, { recursive: true, force: true });

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
  // The API-key rate limit's cost: the limited servers against the unlimited one (same run).
  api_key_no_limit_rps: get('apiKeyNoLimit').rps,
  api_key_redis_rps: withRedis ? get('apiKeyRedis').rps : null,
  api_key_no_limit_cpu_us: get('apiKeyNoLimit').cpuUsPerReq,
  api_key_redis_cpu_us: withRedis ? get('apiKeyRedis').cpuUsPerReq : null,
  api_key_memory_rps: get('apiKeyMemory').rps,
  api_key_memory_cpu_us: get('apiKeyMemory').cpuUsPerReq,
  rate_limit_memory_ratio: ratio(get('apiKeyMemory').rps, get('apiKeyNoLimit').rps),
  rate_limit_redis_ratio: withRedis ? ratio(get('apiKeyRedis').rps, get('apiKeyNoLimit').rps) : null,
  rate_limit_memory_cpu_ratio: ratio(get('apiKeyNoLimit').cpuUsPerReq, get('apiKeyMemory').cpuUsPerReq),
  rate_limit_redis_cpu_ratio: withRedis
    ? ratio(get('apiKeyNoLimit').cpuUsPerReq, get('apiKeyRedis').cpuUsPerReq)
    : null,
  // The same ratios from the limiter's own CPU per check added to the unlimited request's CPU.
  limiter_memory_cpu_us_per_check: memoryCost.cpuUsPerCheck,
  limiter_redis_cpu_us_per_check: redisCost?.cpuUsPerCheck ?? null,
  rate_limit_memory_derived_ratio: ratio(
    get('apiKeyNoLimit').cpuUsPerReq,
    get('apiKeyNoLimit').cpuUsPerReq + memoryCost.cpuUsPerCheck,
  ),
  rate_limit_redis_derived_ratio: redisCost
    ? ratio(get('apiKeyNoLimit').cpuUsPerReq, get('apiKeyNoLimit').cpuUsPerReq + redisCost.cpuUsPerCheck)
    : null,
  rate_limit_memory_target: 0.95,
  rate_limit_redis_target: 0.8,
  non2xx: Object.values(s).reduce((n, r) => n + r.non2xx, 0),
};
console.log(`bench:auth — ${connections} connections, ${rounds} rounds × ${seconds} s, medians`);
for (const [label, name] of [
  ['GET /healthz (no auth)', 'healthz'],
  ['GET /auth/me (JWT)', 'jwtMe'],
  ['GET /auth/test-api-key (Bearer key)', 'apiKeyBearer'],
  ['GET /auth/test-api-key (X-API-Key)', 'apiKeyHeader'],
  ['  same, rate limit in memory (own server)', 'apiKeyMemory'],
  ['  same, rate limit off (baseline)', 'apiKeyNoLimit'],
  ...(withRedis ? ([['  same, rate limit in Redis', 'apiKeyRedis']] as const) : []),
] as const) {
  const r = get(name);
  console.log(
    `${label.padEnd(38)} ${String(r.rps).padStart(7)} req/s  ${String(r.cpuUsPerReq).padStart(6)} µs CPU/req  p50 ${r.p50} ms  p99 ${r.p99} ms`,
  );
}
console.log(
  `ratio to /healthz: JWT ${figures.jwt_ratio}, API key ${figures.api_key_ratio} / ${figures.api_key_header_ratio} (target ≥ 0.8)`,
);
console.log(
  `rate-limit cost, to the same requests with the limit off: memory ${figures.rate_limit_memory_ratio} req/s, ${figures.rate_limit_memory_cpu_ratio} CPU (target ≥ 0.95); ` +
    (withRedis
      ? `Redis ${figures.rate_limit_redis_ratio} req/s, ${figures.rate_limit_redis_cpu_ratio} CPU (target ≥ 0.8; Redis's own CPU not included)`
      : 'Redis not reachable, not measured'),
);
console.log(
  `limiter alone: memory ${memoryCost.cpuUsPerCheck} µs CPU/check → ratio ${figures.rate_limit_memory_derived_ratio}` +
    (redisCost
      ? `; Redis ${redisCost.cpuUsPerCheck} µs CPU/check (this process only) → ratio ${figures.rate_limit_redis_derived_ratio}`
      : ''),
);
console.log(JSON.stringify(figures));
