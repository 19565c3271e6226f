/**
 * Starts the service on HOST:PORT: the API, the background jobs and, unless RUN_WORKER=false, the
 * webhook engine.
 * SIGTERM/SIGINT stop accepting connections, let in-flight requests finish, then close the database.
 */
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createDeps } from './deps.ts';
import { startBackgroundJobs } from './jobs/background-jobs.ts';
import { startWebhookEngine } from './webhooks/webhook-engine.ts';

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
  const app = await buildApp(deps);
  const jobs = startBackgroundJobs(deps);
  // Webhook delivery in-process (ADR 010); RUN_WORKER=false leaves it to `src/worker.ts` processes.
  const webhooks = config.runWorker ? startWebhookEngine(deps) : undefined;
  let stopping = false;
  const stop = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    deps.logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const forced = setTimeout(() => {
      deps.logger.error('shutdown took longer than 25 s; exiting');
      process.exit(1);
    }, 25_000);
    forced.unref();
    try {
      await app.close();
      await jobs.stop();
      await webhooks?.stop();
      await deps.close();
      deps.logger.info('stopped');
      deps.logger.flush();
    } finally {
      clearTimeout(forced);
    }
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
  await app.listen({ host: config.host, port: config.port });
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
