/**
 * The service's configuration, read from the environment once at start (contract §0).
 * Every problem is collected and reported together so an operator fixes them in one go.
 */
import path from 'node:path';
import type { Plan } from './billing/plans.ts';
import { loadPlans } from './billing/plans-file.ts';
import { parseDuration, parseDurationList } from './shared/duration.ts';

export type DatabaseTarget =
  | { kind: 'sqlite'; path: string } // path ':memory:' for an in-memory database
  | { kind: 'postgres'; url: string };

export interface RateLimitRule {
  points: number;
  durationSeconds: number;
}

export interface Config {
  host: string;
  port: number;
  publicUrl: string;
  dataDir: string;
  database: DatabaseTarget;
  redisUrl: string | undefined;
  jwtSecret: string | undefined;
  encryptionKey: string | undefined;
  webhookRetryScheduleMs: number[];
  webhookAllowPrivateTargets: boolean;
  loginRateLimit: RateLimitRule;
  refreshRateLimit: RateLimitRule;
  /** Registrations per client IP (REGISTER_RATE_LIMIT, contract §2.1). */
  registerRateLimit: RateLimitRule;
  plansFile: string | undefined;
  defaultPlan: string;
  /** The plan table: built in, or PLANS_FILE validated at start (contract §7). */
  plans: Plan[];
  /** Prefix of every Redis key this service writes (REDIS_KEY_PREFIX), so deployments can share a Redis. */
  redisKeyPrefix: string;
  /** API_KEY_RATE_LIMITS=false switches the per-key hourly limit off (benchmark baselines only). */
  apiKeyRateLimits: boolean;
  signupEnabled: boolean;
  requireEmailVerification: boolean;
  smtpUrl: string | undefined;
  metricsToken: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  locationRetentionDays: number;
  /** How often a node re-reads a workspace's geofence version to notice other nodes' writes (ADR 007). */
  geofenceIndexCheckMs: number;
  /** A workspace's geofence index is dropped after this long without a query; 0 = never (ADR 007). */
  geofenceIndexIdleMs: number;
  /** SQLite files: interval of the WAL checkpoint thread, 0 for SQLite's own checkpoints only. */
  sqliteCheckpointIntervalMs: number;
  /** How often the job engine merges staged locations into the per-device history (HISTORY_MERGE_INTERVAL, default 2s; ADR 008). */
  historyMergeMs: number;
  /** Locations staged on a node since its last merge that start the next one early (HISTORY_MERGE_ROWS, default 20,000). */
  historyMergeRows: number;
  /** Run the webhook dispatcher and delivery worker inside the server (RUN_WORKER, default true). */
  runWorker: boolean;
  /** A delivery's lease = its timeout + this margin (WEBHOOK_LEASE_MARGIN, default 30s; ADR 010). */
  webhookLeaseMarginMs: number;
  /** How often idle workers look for other nodes' events and due retries (WEBHOOK_POLL_INTERVAL, default 1s). */
  webhookPollMs: number;
  /** Delivery attempts in flight per worker at most (WEBHOOK_CONCURRENCY, default 256). */
  webhookConcurrency: number;
  /** Bound on one workflow action attempt (WORKFLOW_ACTION_TIMEOUT, default 30s). */
  workflowActionTimeoutMs: number;
  /** The dashboard's map tiles (MAP_TILE_URL, `{z}/{x}/{y}` template); unset = a graticule on a plain background. */
  mapTileUrl: string | undefined;
  mapTileAttribution: string | undefined;
  /**
   * A Nominatim-compatible search API (GEOCODER_URL, e.g. `https://nominatim.example.org/search`)
   * the dashboard's "Go to" box asks for places; its origin is allowed in the CSP's connect-src.
   */
  geocoderUrl: string | undefined;
  /** The built dashboard (DASHBOARD_DIR, default `web/dist` of the package). */
  dashboardDir: string;
  /** Between keepalive comments of an open GET /stream (STREAM_KEEPALIVE_INTERVAL, default 15s; ADR 016). */
  streamKeepaliveMs: number;
  /** SIGTERM: how long requests in flight and jobs already sent may take to finish (SHUTDOWN_GRACE_SECONDS, default 10; contract §0). */
  shutdownGraceMs: number;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };

  const bool = (name: string, fallback: boolean): boolean => {
    const value = read(name);
    if (value === undefined) return fallback;
    if (/^(true|1|yes|on)$/i.test(value)) return true;
    if (/^(false|0|no|off)$/i.test(value)) return false;
    problems.push(`${name} must be true or false, got "${value}"`);
    return fallback;
  };

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const value = read(name);
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
      return fallback;
    }
    return n;
  };

  const durationMs = (name: string, fallback: number): number => {
    const value = read(name);
    if (value === undefined) return fallback;
    const ms = parseDuration(value);
    if (ms === undefined) {
      problems.push(`${name} must be a duration like "500ms", "30s" or "1m", got "${value}"`);
      return fallback;
    }
    return ms;
  };

  const rateRule = (name: string, fallback: string): RateLimitRule => {
    const value = read(name) ?? fallback;
    const rule = parseRateLimitRule(value);
    if (!rule) {
      problems.push(`${name} must look like "5/min" (units: s, sec, min, h, hour, day), got "${value}"`);
      return parseRateLimitRule(fallback) as RateLimitRule;
    }
    return rule;
  };

  const host = read('HOST') ?? '127.0.0.1';
  const port = int('PORT', 8080, 0, 65535);
  const dataDir = path.resolve(read('DATA_DIR') ?? './data');

  let database: DatabaseTarget = { kind: 'sqlite', path: path.join(dataDir, 'geofence.db') };
  const databaseUrl = read('DATABASE_URL');
  if (databaseUrl !== undefined) {
    const parsed = parseDatabaseUrl(databaseUrl);
    if (parsed) database = parsed;
    else
      problems.push(
        `DATABASE_URL must be sqlite:<path>, sqlite::memory: or postgres://…, got "${databaseUrl}"`,
      );
  }

  let webhookRetryScheduleMs = [15, 30, 60, 240, 240, 240].map((m) => m * 60_000);
  const schedule = read('WEBHOOK_RETRY_SCHEDULE');
  if (schedule !== undefined) {
    const parsed = parseDurationList(schedule);
    if (parsed && parsed.length > 0) webhookRetryScheduleMs = parsed;
    else
      problems.push(
        `WEBHOOK_RETRY_SCHEDULE must be comma-separated durations like "15m,30m,1h", got "${schedule}"`,
      );
  }

  const publicUrl = read('PUBLIC_URL') ?? `http://${host}:${port}`;
  if (!/^https?:\/\//.test(publicUrl)) problems.push(`PUBLIC_URL must be an http(s) URL, got "${publicUrl}"`);

  const redisUrl = read('REDIS_URL');
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push(`REDIS_URL must start with redis:// or rediss://, got "${redisUrl}"`);
  }
  const smtpUrl = read('SMTP_URL');
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl)) {
    problems.push(`SMTP_URL must start with smtp:// or smtps://, got "${smtpUrl}"`);
  }

  const jwtSecret = read('JWT_SECRET');
  if (jwtSecret !== undefined && jwtSecret.length < 32) {
    problems.push('JWT_SECRET must be at least 32 characters long');
  }
  const encryptionKey = read('ENCRYPTION_KEY');
  if (encryptionKey !== undefined && encryptionKey.length < 32) {
    problems.push('ENCRYPTION_KEY must be at least 32 characters long');
  }

  const mapTileUrl = read('MAP_TILE_URL');
  if (mapTileUrl !== undefined && !/^https?:\/\/[^/]+\/.*\{z\}.*\{x\}.*\{y\}/.test(mapTileUrl)) {
    problems.push(`MAP_TILE_URL must be an http(s) URL template with {z}, {x} and {y}, got "${mapTileUrl}"`);
  }

  const geocoderUrl = read('GEOCODER_URL');
  const geocoderProblem = geocoderUrl === undefined ? undefined : checkGeocoderUrl(geocoderUrl);
  if (geocoderProblem) problems.push(geocoderProblem);

  const logLevel = (read('LOG_LEVEL') ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const config: Config = {
    host,
    port,
    publicUrl: publicUrl.replace(/\/+$/, ''),
    dataDir,
    database,
    redisUrl,
    jwtSecret,
    encryptionKey,
    webhookRetryScheduleMs,
    webhookAllowPrivateTargets: bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    loginRateLimit: rateRule('LOGIN_RATE_LIMIT', '5/min'),
    refreshRateLimit: rateRule('REFRESH_RATE_LIMIT', '10/min'),
    registerRateLimit: rateRule('REGISTER_RATE_LIMIT', '10/hour'),
    plansFile: read('PLANS_FILE'),
    defaultPlan: read('DEFAULT_PLAN') ?? 'free',
    plans: loadPlans(read('PLANS_FILE'), read('DEFAULT_PLAN') ?? 'free', problems),
    redisKeyPrefix: read('REDIS_KEY_PREFIX') ?? 'geofence:',
    apiKeyRateLimits: bool('API_KEY_RATE_LIMITS', true),
    signupEnabled: bool('SIGNUP_ENABLED', true),
    requireEmailVerification: bool('REQUIRE_EMAIL_VERIFICATION', false),
    smtpUrl,
    metricsToken: read('METRICS_TOKEN'),
    logLevel,
    locationRetentionDays: int('LOCATION_RETENTION_DAYS', 90, 1, 36_500),
    geofenceIndexCheckMs: int('GEOFENCE_INDEX_CHECK_MS', 250, 0, 60_000),
    geofenceIndexIdleMs: int('GEOFENCE_INDEX_IDLE_MS', 900_000, 0, 86_400_000),
    sqliteCheckpointIntervalMs: int('SQLITE_CHECKPOINT_INTERVAL_MS', 50, 0, 60_000),
    historyMergeMs: durationMs('HISTORY_MERGE_INTERVAL', 2_000),
    historyMergeRows: int('HISTORY_MERGE_ROWS', 20_000, 1, 10_000_000),
    runWorker: bool('RUN_WORKER', true),
    webhookLeaseMarginMs: durationMs('WEBHOOK_LEASE_MARGIN', 30_000),
    webhookPollMs: durationMs('WEBHOOK_POLL_INTERVAL', 1000),
    webhookConcurrency: int('WEBHOOK_CONCURRENCY', 256, 1, 10_000),
    workflowActionTimeoutMs: durationMs('WORKFLOW_ACTION_TIMEOUT', 30_000),
    mapTileUrl,
    mapTileAttribution: read('MAP_TILE_ATTRIBUTION'),
    geocoderUrl,
    dashboardDir: path.resolve(read('DASHBOARD_DIR') ?? path.join(import.meta.dirname, '../web/dist')),
    streamKeepaliveMs: durationMs('STREAM_KEEPALIVE_INTERVAL', 15_000),
    shutdownGraceMs: int('SHUTDOWN_GRACE_SECONDS', 10, 0, 3600) * 1000,
  };
  if (config.streamKeepaliveMs < 100) problems.push('STREAM_KEEPALIVE_INTERVAL must be at least 100ms');
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

export function parseDatabaseUrl(url: string): DatabaseTarget | undefined {
  if (url === 'sqlite::memory:' || url === ':memory:') return { kind: 'sqlite', path: ':memory:' };
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\//, '');
    return file === '' ? undefined : { kind: 'sqlite', path: path.resolve(file) };
  }
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  return undefined;
}

/**
 * Why a geocoder URL cannot be used, or undefined. Browsers call it directly (the server never
 * does, so it opens no request forgery path): it must be an absolute http(s) URL, and carries no
 * credentials, since every visitor of the dashboard reads it from `/config.json`.
 */
function checkGeocoderUrl(value: string): string | undefined {
  const url = URL.parse(value);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    return `GEOCODER_URL must be an http(s) URL like https://nominatim.example.org/search, got "${value}"`;
  }
  // The value is not repeated: it holds a secret.
  if (url.username || url.password) return 'GEOCODER_URL must not contain a user name or password';
  return undefined;
}

const RATE_UNITS: Record<string, number> = {
  s: 1,
  sec: 1,
  second: 1,
  m: 60,
  min: 60,
  minute: 60,
  h: 3600,
  hour: 3600,
  day: 86_400,
  d: 86_400,
};

export function parseRateLimitRule(value: string): RateLimitRule | undefined {
  const match = /^(\d+)\s*\/\s*([a-z]+)$/i.exec(value.trim());
  if (!match) return undefined;
  const points = Number(match[1]);
  const durationSeconds = RATE_UNITS[(match[2] ?? '').toLowerCase()];
  if (!durationSeconds || !Number.isInteger(points) || points < 1) return undefined;
  return { points, durationSeconds };
}
