/**
 * The delivery worker without HTTP (ADR 010): the outbox dispatcher and the delivery worker on the
 * configured database, until SIGTERM/SIGINT. Scale delivery out by running more of these (or set
 * RUN_WORKER=false on API nodes to keep delivery off them).
 */
import { ConfigError, loadConfig } from './config.ts';
import { createDeps } from './deps.ts';
import { runWorkerUntilSignal } from './engine.ts';

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
  await runWorkerUntilSignal(await createDeps(config));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `Worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
