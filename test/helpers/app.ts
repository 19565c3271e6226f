/**
 * Builds the real application on a real database for a test, with a manual clock and silent (or
 * captured) logs. Everything it opens is closed by `close()`.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createDeps, type Deps, type DepsOverrides } from '../../src/deps.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const TEST_JWT_SECRET = 'test-jwt-secret-0123456789abcdefghijklmnop';
export const TEST_ENCRYPTION_KEY = 'test-encryption-key-0123456789abcdefghijk';

export interface TestApp {
  app: FastifyInstance;
  deps: Deps;
  clock: ManualClock;
  logs: Array<Record<string, unknown>>;
  /** The database this app runs on; pass it to another `startTestApp` for a second node. */
  database: TestDatabase;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  clock?: ManualClock;
  overrides?: Omit<DepsOverrides, 'clock' | 'logger' | 'database'>;
  /** Add routes (e.g. one that throws) before the app is made ready. */
  beforeReady?: (app: FastifyInstance) => void;
  /**
   * Run on this existing database (e.g. another app's, to simulate a second node) instead of a
   * fresh one; the caller keeps ownership, so `close()` does not drop it.
   */
  database?: TestDatabase;
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const ownsDatabase = options.database === undefined;
  const database = options.database ?? (await createTestDatabase());
  const clock = options.clock ?? new ManualClock('2026-03-10T12:00:00.000Z');
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const config = loadConfig({
    DATABASE_URL: database.url,
    DATA_DIR: '/tmp/geofence-test-data',
    JWT_SECRET: TEST_JWT_SECRET,
    ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    ...options.env,
  });
  const deps = await createDeps(config, {
    ...options.overrides,
    clock,
    logger: pino({ level: 'info' }, sink),
    database: database.schema ? { schema: database.schema, poolSize: 4 } : {},
  });
  const app = await buildApp(deps);
  options.beforeReady?.(app);
  await app.ready();
  return {
    app,
    deps,
    clock,
    logs,
    database,
    close: async () => {
      await app.close();
      await deps.close();
      if (ownsDatabase) await database.drop();
    },
  };
}
