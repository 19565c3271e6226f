/**
 * A small runner for background chores (retention, later outbox sweeps): runs `run` every
 * `intervalMs`, never two runs at once, logs failures instead of crashing the process, and keeps
 * its timer unref'd so it never holds the process open. `stop()` cancels the timer and waits for a
 * run in progress, so shutdown never closes the database under it.
 */
import type { Logger } from 'pino';

export interface PeriodicJobOptions {
  name: string;
  intervalMs: number;
  /** Delay before the first run (default: one interval). */
  firstRunAfterMs?: number;
  run(): Promise<unknown>;
  logger: Pick<Logger, 'info' | 'error'>;
}

export interface PeriodicJob {
  stop(): Promise<void>;
}

export function startPeriodicJob(options: PeriodicJobOptions): PeriodicJob {
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (delayMs: number): void => {
    if (stopped) return;
    timer = setTimeout(tick, delayMs);
    timer.unref();
  };

  function tick(): void {
    running = (async () => {
      try {
        const result = await options.run();
        options.logger.info({ job: options.name, result }, 'job finished');
      } catch (error) {
        options.logger.error({ job: options.name, err: error }, 'job failed');
      }
    })().finally(() => {
      running = undefined;
      schedule(options.intervalMs);
    });
  }

  schedule(options.firstRunAfterMs ?? options.intervalMs);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
