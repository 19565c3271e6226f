/**
 * The composition root: everything the server, the worker and the CLI need is built here, once,
 * from the configuration. Tests pass overrides (a manual clock, a cheaper password hash, a log
 * sink) instead of patching modules.
 */
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Notifier } from './account/notifier.ts';
import { Authenticator } from './auth/authenticator.ts';
import { localInvalidationBus, redisInvalidationBus } from './auth/cache-invalidation.ts';
import type { IdentityContext } from './auth/identity-context.ts';
import { JwtTokens } from './auth/jwt-tokens.ts';
import { LoginAttempts } from './auth/login-attempts.ts';
import { sendPasswordReset } from './auth/password-reset.service.ts';
import {
  PasswordResetRequests,
  RESET_EMAILS_PER_ADDRESS,
  RESET_PERIOD_SECONDS,
  RESET_REQUESTS_PER_IP,
} from './auth/password-reset-requests.ts';
import { OWASP_ARGON2ID, type PasswordHashParams } from './auth/passwords.ts';
import {
  VERIFICATION_RESEND_PERIOD_SECONDS,
  VERIFICATION_RESENDS_PER_ADDRESS,
} from './auth/verification-mail-limit.ts';
import { type Billing, createBilling } from './billing/billing.ts';
import type { Config } from './config.ts';
import { type DashboardFiles, loadDashboardFiles } from './dashboard/dashboard-files.ts';
import { type DatabaseHandle, type OpenDatabaseOptions, openDatabase } from './db/database.ts';
import { migrateToLatest } from './db/migrate.ts';
import { GeofenceIndexRegistry } from './geofences/geofence-index-registry.ts';
import { createJobSignals, type JobSignals } from './jobs/wake-signal.ts';
import { RateLimiter } from './limits/rate-limiter.ts';
import { createWindowStores } from './limits/window-stores.ts';
import { HistoryMergeState } from './locations/history-merge.ts';
import { createLogger } from './logger.ts';
import { Mailer } from './mail/mailer.ts';
import { type Clock, systemClock } from './shared/clock.ts';
import { SecretBox } from './shared/encryption.ts';
import { resolveSecret } from './shared/secrets.ts';
import { createStreamHub } from './stream/create-stream-hub.ts';
import { StreamPublisher } from './stream/publish.ts';
import type { StreamHub } from './stream/stream-hub.ts';
import {
  INVITATION_EMAIL_PERIOD_SECONDS,
  INVITATION_EMAILS_PER_ADDRESS,
  type InvitationMailLimits,
} from './workspaces/invitation-mail-limits.ts';

const REDIS_RECONNECT_MAX_MS = 1_000;
/** At start, how long a node waits for Redis before its limits count in memory (Redis down). */
const REDIS_START_WAIT_MS = 2_000;

export interface Deps {
  config: Config;
  logger: Logger;
  clock: Clock;
  database: DatabaseHandle;
  jwtSecret: string;
  encryptionKey: string;
  /** Seals secrets stored at rest (webhook signing secrets, workflow credentials). */
  secretBox: SecretBox;
  redis: Redis | undefined;
  mailer: Mailer;
  notifier: Notifier;
  identity: IdentityContext;
  /** Per-workspace in-memory geofence indexes, shared by /geofences/contains and location ingestion. */
  geofenceIndexes: GeofenceIndexRegistry;
  /**
   * The identity limits (contract §2.1, §2.2): failed sign-ins and registrations per client IP,
   * refreshes per user, verification and invitation e-mails per address.
   */
  limiters: {
    login: LoginAttempts;
    refresh: RateLimiter;
    register: RateLimiter;
    verificationEmails: RateLimiter;
    invitationEmails: InvitationMailLimits;
  };
  /** Password-reset requests: the per-IP budget on the request path, the e-mails after it (contract §2.1). */
  passwordResets: PasswordResetRequests;
  /** Wake-ups of the webhook engine: ingestion commits → outbox dispatcher → delivery worker (ADR 010). */
  signals: JobSignals;
  /** Wakes the history merge early once this node has staged many locations (ADR 008). */
  historyMerge: HistoryMergeState;
  /** Plans, subscriptions, API-key rate limits, event quotas and usage metering (contract §7). */
  billing: Billing;
  /** The built web dashboard, served at `/` (src/dashboard). */
  dashboardFiles: DashboardFiles;
  /** The live stream's hub: committed positions and events to open streams on every node (ADR 016). */
  stream: StreamHub;
  /** Turns commits (ingestion, dwell worker) into stream messages, for watched workspaces only. */
  streamPublisher: StreamPublisher;
  /** Closes everything this root opened, in reverse order. */
  close(): Promise<void>;
}

export interface DepsOverrides {
  logger?: Logger;
  clock?: Clock;
  database?: OpenDatabaseOptions;
  /** Skip running migrations at start (the CLI's `migrate` runs them itself). */
  skipMigrations?: boolean;
  /** Tests use cheaper argon2id parameters; production uses OWASP's. */
  passwordHash?: PasswordHashParams;
}

export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  const database = openDatabase(config.database, {
    walCheckpointIntervalMs: config.sqliteCheckpointIntervalMs,
    logger,
    ...overrides.database,
  });
  try {
    if (!overrides.skipMigrations) {
      const { applied } = await migrateToLatest(database);
      if (applied.length > 0) logger.info({ applied }, 'database migrated');
    }
  } catch (error) {
    await database.close();
    throw error;
  }
  const jwtSecret = resolveSecret(config.jwtSecret, config.dataDir, 'jwt', logger);
  const encryptionKey = resolveSecret(config.encryptionKey, config.dataDir, 'encryption', logger);
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, {
        lazyConnect: false,
        maxRetriesPerRequest: 2,
        // Reconnect at least every second: cross-node signals resume within about a second of
        // Redis's return (contract §0). Connections made with `duplicate()` inherit it.
        retryStrategy: (times) => Math.min(times * 100, REDIS_RECONNECT_MAX_MS),
      })
    : undefined;
  redis?.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  const db = database.db;
  const signals = createJobSignals();
  const mailer = new Mailer({
    db,
    capabilities: database.capabilities,
    clock,
    logger,
    smtpUrl: config.smtpUrl,
    signal: signals.mail,
  });
  const tokens = new JwtTokens(jwtSecret, clock);
  const invalidations = redis ? redisInvalidationBus(redis, logger) : localInvalidationBus();
  const authenticator = new Authenticator({ db, tokens, clock, logger, bus: invalidations });
  const identity: IdentityContext = {
    db,
    clock,
    tokens,
    mailer,
    authenticator,
    passwordHash: overrides.passwordHash ?? OWASP_ARGON2ID,
    publicUrl: config.publicUrl,
    signupEnabled: config.signupEnabled,
    requireEmailVerification: config.requireEmailVerification,
  };
  const windows = createWindowStores({ redis, keyPrefix: config.redisKeyPrefix, logger });
  await windows.ready(REDIS_START_WAIT_MS);
  const verificationWindow = windows.create(VERIFICATION_RESEND_PERIOD_SECONDS * 1000);
  const invitationWindow = windows.create(INVITATION_EMAIL_PERIOD_SECONDS * 1000);
  const limiters: Deps['limiters'] = {
    login: new LoginAttempts({
      limit: config.loginRateLimit.points,
      store: windows.create(config.loginRateLimit.durationSeconds * 1000),
      clock,
      logger,
    }),
    refresh: new RateLimiter({
      name: 'refresh',
      limit: config.refreshRateLimit.points,
      store: windows.create(config.refreshRateLimit.durationSeconds * 1000),
      clock,
    }),
    register: new RateLimiter({
      name: 'register',
      limit: config.registerRateLimit.points,
      store: windows.create(config.registerRateLimit.durationSeconds * 1000),
      clock,
    }),
    verificationEmails: new RateLimiter({
      name: 'verify-email',
      limit: VERIFICATION_RESENDS_PER_ADDRESS,
      store: verificationWindow,
      clock,
    }),
    invitationEmails: {
      resends: new RateLimiter({
        name: 'invitation-resend',
        limit: INVITATION_EMAILS_PER_ADDRESS,
        store: invitationWindow,
        clock,
      }),
      newInvitations: new RateLimiter({
        name: 'invitation-new',
        limit: INVITATION_EMAILS_PER_ADDRESS,
        store: invitationWindow,
        clock,
      }),
    },
  };
  // Contract §2.1: the IP's budget is spent on the request path, the address's after the answer.
  const resetWindow = windows.create(RESET_PERIOD_SECONDS * 1000);
  const passwordResets = new PasswordResetRequests({
    perIp: new RateLimiter({
      name: 'pwreset-ip',
      limit: RESET_REQUESTS_PER_IP,
      store: resetWindow,
      clock,
    }),
    perAddress: new RateLimiter({
      name: 'pwreset-address',
      limit: RESET_EMAILS_PER_ADDRESS,
      store: resetWindow,
      clock,
    }),
    logger,
    send: (email, requestedAt) => sendPasswordReset(identity, email, requestedAt),
  });
  const notifier = new Notifier({ db, mailer, clock, publicUrl: config.publicUrl });
  const billing = createBilling({ config, db, clock, logger, redis, windows, notifier });
  const stream = await createStreamHub({ config, database, redis, logger });
  const streamPublisher = new StreamPublisher({
    hub: stream,
    db,
    capabilities: database.capabilities,
    logger,
  });
  return {
    config,
    logger,
    clock,
    database,
    jwtSecret,
    encryptionKey,
    secretBox: new SecretBox(encryptionKey),
    redis,
    mailer,
    notifier,
    identity,
    geofenceIndexes: new GeofenceIndexRegistry({
      db,
      clock,
      checkIntervalMs: config.geofenceIndexCheckMs,
      idleEvictMs: config.geofenceIndexIdleMs,
    }),
    signals,
    historyMerge: new HistoryMergeState(signals.historyMerge, config.historyMergeRows, clock),
    dashboardFiles: loadDashboardFiles(config.dashboardDir),
    limiters,
    passwordResets,
    billing,
    stream,
    streamPublisher,
    close: async () => {
      await streamPublisher.idle();
      await stream.close();
      await billing.close();
      await passwordResets.idle();
      windows.close();
      await mailer.close();
      await invalidations.close();
      redis?.disconnect();
      await database.close();
    },
  };
}
