/**
 * Graceful shutdown of a process (contract §0), shared by `server.ts` and the worker process:
 * on SIGTERM or SIGINT, `drain` stops taking work and finishes what was started (requests in
 * flight, deliveries and workflow actions already sent; claimed jobs not started are given back
 * at once by the workers). It gets `SHUTDOWN_GRACE_SECONDS`; what is still running after that is
 * abandoned (its leases run out and another node takes it: at least once, never lost). Then
 * `close` releases connections and the process exits 0. A second signal exits at once.
 */
import type { Logger } from 'pino';

/** After the grace period, closing connections gets this long before the process exits anyway. */
const CLOSE_BOUND_MS = 5_000;

export interface ShutdownPlan {
  logger: Logger;
  graceMs: number;
  /** Stop accepting work and finish what was started. */
  drain(): Promise<unknown>;
  /** Release what the process holds (database, Redis, mail). */
  close(): Promise<unknown>;
}

export function exitGracefullyOnSignals(plan: ShutdownPlan): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      plan.logger.warn({ signal }, 'second signal while shutting down: exiting now');
      exitAfterLogs(plan.logger, 1);
      return;
    }
    stopping = true;
    void shutDown(plan, signal).then(
      () => exitAfterLogs(plan.logger, 0),
      (error: unknown) => {
        plan.logger.error({ err: error }, 'shutdown failed');
        exitAfterLogs(plan.logger, 1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

async function shutDown(plan: ShutdownPlan, signal: NodeJS.Signals): Promise<void> {
  const { logger, graceMs } = plan;
  logger.info({ signal, grace_seconds: graceMs / 1000 }, 'shutting down: finishing work in flight');
  const drained = await within(plan.drain(), graceMs);
  if (!drained) {
    logger.warn(
      { grace_seconds: graceMs / 1000 },
      'grace period over: work still in flight is abandoned; its leases run out and another node retries it',
    );
  }
  if (!(await within(plan.close(), CLOSE_BOUND_MS))) logger.warn('closing connections took too long');
  logger.info('stopped');
}

/** Whether `work` settled within `ms` (a rejection is logged by the caller's work itself). */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Exits once pino has written what it holds: the last lines say why the process ended. */
function exitAfterLogs(logger: Logger, code: number): void {
  logger.flush(() => process.exit(code));
  // A log destination that never calls back must not keep the process alive.
  setTimeout(() => process.exit(code), 1_000).unref();
}

/**
 * A promise nobody handled must not end a service whose every loop already handles its own
 * failures (contract §0: a fault never ends the process): it is logged as the bug it is.
 */
export function logUnhandledRejections(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection (a bug): logged, the process carries on');
  });
}
