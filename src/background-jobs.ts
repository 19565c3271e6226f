/** The periodic chores a server process runs beside the API; `server.ts` starts and stops them. */
import { issueInvoices } from './billing/invoices.service.ts';
import type { Deps } from './deps.ts';
import { type PeriodicJob, startPeriodicJob } from './jobs/periodic-job.ts';
import { purgeOldLocations } from './locations/retention.ts';

const HOUR_MS = 3_600_000;

export interface BackgroundJobs {
  stop(): Promise<void>;
}

export function startBackgroundJobs(deps: Deps): BackgroundJobs {
  const jobs: PeriodicJob[] = [
    startPeriodicJob({
      name: 'location-retention',
      // Hourly keeps each run small; the first a minute after start, off the start-up path.
      intervalMs: HOUR_MS,
      firstRunAfterMs: 60_000,
      run: () => purgeOldLocations(deps.database.db, deps.clock, deps.config.locationRetentionDays),
      logger: deps.logger,
    }),
    startPeriodicJob({
      name: 'invoices',
      // Invoices of the month that just closed; hourly, so a period is invoiced within the hour
      // after it ends (every node runs it; the unique (workspace, period) row keeps one each).
      intervalMs: HOUR_MS,
      firstRunAfterMs: 30_000,
      run: () =>
        issueInvoices({ db: deps.database.db, subscriptions: deps.billing.subscriptions, clock: deps.clock }),
      logger: deps.logger,
    }),
    startPeriodicJob({
      name: 'usage-flush',
      // The daily usage series is counted in memory and written every few seconds (ADR 011).
      intervalMs: 10_000,
      run: () => deps.billing.meter.flush(),
      logger: quietLogger(deps),
    }),
  ];
  return {
    stop: async () => {
      await Promise.all(jobs.map((job) => job.stop()));
    },
  };
}

/** The flush runs every 10 s: its success is not worth an info line each time. */
function quietLogger(deps: Deps): { info(): void; error: Deps['logger']['error'] } {
  return { info: () => {}, error: deps.logger.error.bind(deps.logger) };
}
