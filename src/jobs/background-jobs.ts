/** The periodic chores a server process runs beside the API; `server.ts` starts and stops them. */
import type { Deps } from '../deps.ts';
import { purgeOldLocations } from '../locations/retention.ts';
import { type PeriodicJob, startPeriodicJob } from './periodic-job.ts';

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
  ];
  return {
    stop: async () => {
      await Promise.all(jobs.map((job) => job.stop()));
    },
  };
}
