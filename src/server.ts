/**
 * Starts the service on HOST:PORT: the API, the background jobs and, unless RUN_WORKER=false, the
 * webhook engine. SIGTERM/SIGINT shut it down gracefully (src/shutdown.ts, contract §0): no new
 * connections or requests, requests in flight and jobs already sent finish within
 * SHUTDOWN_GRACE_SECONDS, claimed jobs not started are given back at once, then exit 0.
 */
import { buildApp } from './app.ts';
import { startBackgroundJobs } from './background-jobs.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createDeps } from './deps.ts';
import { startJobEngine } from './engine.ts';
import { exitGracefullyOnSignals, logUnhandledRejections } from './shutdown.ts';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const deps = await createDeps(config);
  logUnhandledRejections(deps.logger);
  const app = await buildApp(deps);
  const jobs = startBackgroundJobs(deps);
  // Webhook delivery in-process (ADR 010); RUN_WORKER=false leaves it to `src/worker.ts` processes.
  const webhooks = config.runWorker ? startJobEngine(deps) : undefined;
  exitGracefullyOnSignals({
    logger: deps.logger,
    graceMs: config.shutdownGraceMs,
    // HTTP and the engine drain side by side: a delivery in flight does not wait for a slow request.
    drain: () => Promise.all([app.close(), webhooks?.stop(), jobs.stop()]),
    close: () => deps.close(),
  });
  await app.listen({ host: config.host, port: config.port });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
