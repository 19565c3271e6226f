/**
 * Builds the real application on a real database for a test, with a manual clock and silent (or
 * captured) logs. Everything it opens is closed by `close()`; an app not closed by the end of the
 * test that started it (or, for one shared by a `describe`, by the end of the file) fails that test
 * (leak-check.ts).
 *
 * The job engine is not started (tests run its workers' rounds themselves), except its e-mail
 * worker: like a server, the app sends the e-mails it stores (src/mail/mailer.ts), so a test reads
 * them from the SMTP sink; `deps.mailer.idle()` waits for them. With RUN_WORKER=false it does not,
 * like an API node whose messages a worker process sends.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createDeps, type Deps, type DepsOverrides } from '../../src/deps.ts';
import { createMailWorker } from '../../src/engine.ts';
import type { MailWorker } from '../../src/mail/mail-job.ts';
import { ManualClock } from '../../src/shared/clock.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import './leak-check.ts';
import { callerOutsideHelpers, trackFixture } from './open-fixtures.ts';

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
  const openedAt = callerOutsideHelpers();
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
  const dropOwnDatabase = async () => {
    if (ownsDatabase) await database.drop();
  };
  let deps: Deps;
  try {
    deps = await createDeps(config, {
      ...options.overrides,
      clock,
      logger: pino({ level: 'info' }, sink),
      database: database.schema ? { schema: database.schema, poolSize: 4 } : {},
    });
  } catch (error) {
    await dropOwnDatabase();
    throw error;
  }
  // From here on the app owns connections, workers and timers: a start that fails half-way closes
  // them, since the caller gets nothing to close.
  let app: FastifyInstance | undefined;
  let mailWorker: MailWorker | undefined;
  const closeAll = async () => {
    try {
      // Side by side, as the server drains: a message claimed and not started is given back, one
      // in flight finishes.
      await Promise.all([app?.close(), mailWorker?.stop()]);
    } finally {
      try {
        await deps.close();
      } finally {
        await dropOwnDatabase();
      }
    }
  };
  try {
    app = await buildApp(deps);
    options.beforeReady?.(app);
    await app.ready();
    if (config.runWorker) {
      mailWorker = createMailWorker(deps);
      mailWorker.start(deps.signals.mail, config.webhookPollMs);
    }
  } catch (error) {
    // The start's error is the one to report; closing after it may fail for the same cause.
    await closeAll().catch(() => undefined);
    throw error;
  }
  const closed = trackFixture('test app', openedAt);
  return {
    app,
    deps,
    clock,
    logs,
    database,
    close: async () => {
      try {
        await closeAll();
      } finally {
        closed();
      }
    },
  };
}
