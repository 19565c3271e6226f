/**
 * A process that only delivers webhooks (no HTTP): `node src/worker.ts`, `npm run worker` or
 * `cli worker`. Any number of them can run beside the servers on one database (ADR 010). SIGTERM
 * or SIGINT stop claiming, let attempts in flight finish and record them, then close.
 */
import type { Deps } from '../deps.ts';
import { startWebhookEngine } from './webhook-engine.ts';

export async function runWorkerUntilSignal(deps: Deps): Promise<void> {
  const engine = startWebhookEngine(deps);
  deps.logger.info({ worker: engine.worker.id }, 'webhook worker started');
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  deps.logger.info({ signal }, 'webhook worker stopping: finishing attempts in flight');
  const forced = setTimeout(() => {
    deps.logger.error('worker shutdown took longer than 70 s; exiting');
    process.exit(1);
  }, 70_000);
  forced.unref();
  await engine.stop();
  await deps.close();
  clearTimeout(forced);
  deps.logger.info('webhook worker stopped');
  deps.logger.flush();
}
