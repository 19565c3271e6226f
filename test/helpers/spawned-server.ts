/**
 * The service as separate processes (`node src/server.ts`), for tests that need more than one node
 * or a real listening server: spawn on a free port, wait for /healthz, call the API over real
 * HTTP, stop with SIGTERM. Several servers can share one database: a SQLite file, or on PostgreSQL
 * a fresh database. Not a schema of the test database: a server process takes its schema from the
 * URL alone, and one named through `?options=-c search_path=…` would hold the tables while the
 * migrator (which is told the schema only through `openDatabase`) keeps its bookkeeping in `public`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET } from './app.ts';
import { createSharedTestDatabase, IS_POSTGRES, TEST_DATABASE_URL, type TestDatabase } from './database.ts';

export interface SpawnedServer {
  base: string;
  child: ChildProcess;
  /** Everything the process wrote (warnings and errors at LOG_LEVEL warn), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A database that server processes can share: a fresh PostgreSQL database, or a SQLite file. */
export async function createProcessDatabase(): Promise<TestDatabase> {
  if (!IS_POSTGRES) return createSharedTestDatabase();
  const name = `t_${randomBytes(6).toString('hex')}`;
  await admin(`create database ${name}`);
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    schema: undefined,
    drop: () => admin(`drop database if exists ${name} with (force)`),
  };
}

export async function spawnServer(
  database: TestDatabase,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<SpawnedServer> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['src/server.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      // The nodes of one deployment share their secrets: a token issued by one is valid on the other.
      JWT_SECRET: TEST_JWT_SECRET,
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  // Logs (stdout) and errors (stderr) both, for the message of a failing test.
  const collect = (chunk: Buffer) => {
    stderr += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${base}/healthz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become healthy: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    child,
    output: () => stderr,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface ApiAnswer<T> {
  status: number;
  body: T;
}

/** One API call over HTTP (`/api/v1` + path); the body is parsed JSON when there is one. */
export async function httpCall<T = unknown>(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; apiKey?: string; token?: string } = {},
): Promise<ApiAnswer<T>> {
  const headers: Record<string, string> = {};
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

/** Like httpCall, but throws unless the status is the expected one. */
export async function httpExpect<T = unknown>(
  expected: number,
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; apiKey?: string; token?: string } = {},
): Promise<T> {
  const answer = await httpCall<T>(base, method, path, options);
  if (answer.status !== expected) {
    throw new Error(
      `${method} ${path} → ${answer.status} (expected ${expected}): ${JSON.stringify(answer.body)}`,
    );
  }
  return answer.body;
}

/**
 * Server environment for tests of volume: new workspaces start on the enterprise plan, which has no
 * limits. The free plan's API rate limit and quotas would stop them, and enterprise is not open to
 * self-service (contract §7), so it is the operator's default here rather than a plan change.
 */
export const NO_PLAN_LIMITS: Record<string, string> = { DEFAULT_PLAN: 'enterprise' };

/**
 * Registers a user through `base` and returns an API key with every scope of its workspace (on a
 * server started with NO_PLAN_LIMITS, a workspace without limits).
 */
export async function apiKeyFor(base: string, label: string): Promise<string> {
  const email = `${label}-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const password = 'correct horse battery staple';
  await httpExpect(201, base, 'POST', '/auth/register', { body: { email, password } });
  const pair = await httpExpect<{ access_token: string }>(200, base, 'POST', '/auth/login', {
    body: { email, password },
  });
  const created = await httpExpect<{ key: string }>(201, base, 'POST', '/account/api-keys', {
    token: pair.access_token,
    body: { name: label, scopes: ['*'] },
  });
  return created.key;
}
