/**
 * A process that only delivers webhooks and runs workflow actions (no HTTP): `node src/worker.ts`,
 * `npm run worker` or `cli worker`. Any number of them can run beside the servers on one database
 * (ADR 010). SIGTERM or SIGINT stop claiming, give back claimed jobs not started, let attempts in
 * flight finish within SHUTDOWN_GRACE_SECONDS and record them, then exit 0 (src/shutdown.ts).
 */
import type { Deps } from '../deps.ts';
import { exitGracefullyOnSignals, logUnhandledRejections } from '../shutdown.ts';
import { startWebhookEngine } from './webhook-engine.ts';

/** Never resolves: the process ends in the shutdown handler, with exit code 0 after a clean drain. */
export function runWorkerUntilSignal(deps: Deps): Promise<never> {
  logUnhandledRejections(deps.logger);
  const engine = startWebhookEngine(deps);
  deps.logger.info({ worker: engine.worker.id }, 'webhook worker started');
  exitGracefullyOnSignals({
    logger: deps.logger,
    graceMs: deps.config.shutdownGraceMs,
    drain: () => engine.stop(),
    close: () => deps.close(),
  });
  return new Promise<never>(() => {});
}
