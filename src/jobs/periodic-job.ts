/**
 * A small runner for background chores (retention, invoices, the usage flush): runs `run` every
 * `intervalMs`, never two runs at once, logs failures instead of crashing the process, and keeps
 * its timer unref'd so it never holds the process open. `stop()` cancels the timer and waits for a
 * run in progress, so shutdown never closes the database under it.
 */
import type { Logger } from 'pino';
import { type JobTimers, realTimers } from './job-timers.ts';

export interface PeriodicJobOptions {
  name: string;
  intervalMs: number;
  /** Delay before the first run (default: one interval). */
  firstRunAfterMs?: number;
  run(): Promise<unknown>;
  logger: Pick<Logger, 'info' | 'error'>;
  /** Where the delays are waited out (default: the process's unref'd timers); tests pass manual ones. */
  timers?: JobTimers;
}

export interface PeriodicJob {
  stop(): Promise<void>;
}

export function startPeriodicJob(options: PeriodicJobOptions): PeriodicJob {
  const timers = options.timers ?? realTimers;
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: unknown;

  const schedule = (delayMs: number): void => {
    if (stopped) return;
    timer = timers.setTimeout(tick, delayMs);
  };

  function tick(): void {
    timer = undefined;
    running = (async () => {
      try {
        const result = await options.run();
        options.logger.info({ job: options.name, result }, 'job finished');
      } catch (error) {
        options.logger.error({ job: options.name, err: error }, 'job failed');
      }
    })().finally(() => {
      running = undefined;
      // The next run is timed from the end of this one: runs never overlap, however long they take.
      schedule(options.intervalMs);
    });
  }

  schedule(options.firstRunAfterMs ?? options.intervalMs);
  return {
    async stop() {
      stopped = true;
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
