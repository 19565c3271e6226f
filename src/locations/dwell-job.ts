/**
 * Dwell timers as a job kind of the one engine (contract §4.5, ADR 015, ADR 020). A job is one
 * workspace's due visits; executing it fires them in one transaction (dwell-firing.service.ts), which
 * marks each visit dwelt beside its event — so the timers need no lease: two nodes taking the same
 * visit store one dwell, whichever commits first, and a crash loses nothing (the visit stays due).
 * Recording says what must be said once the events are committed (the dispatcher, the quota, the
 * live stream). An idle worker sleeps until the next timer is due, or the poll interval, which finds
 * timers other nodes created; storing a timer on this node wakes it early.
 *
 * In memory only: the visits this worker is firing (not claimed twice meanwhile) and those it must
 * not take again at once (a device locked by an ingestion: 10 ms; a failed round: 1 s), measured on
 * the process's monotonic clock, not the service clock, so a test's frozen clock cannot hold them.
 */
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Db, DialectCapabilities } from '../db/database.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';
import { type ClaimedJob, type JobKind, JobWorker } from '../jobs/job-worker.ts';
import type { WakeSignal } from '../jobs/wake-signal.ts';
import type { Clock } from '../shared/clock.ts';
import { uuidv7 } from '../shared/ids.ts';
import { type DueVisit, dueVisits, nextDwellDue } from './dwell.repository.ts';
import { type FiredVisits, fireWorkspaceDwells } from './dwell-firing.service.ts';

export interface DwellWorkerOptions {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** After a workspace's dwell events are committed: wake the dispatcher, count them, stream them. */
  onFired?: (workspaceId: string, events: readonly GeofenceEvent[], dispatch: boolean) => void;
}

/** The dwell timers' worker: the engine's loop, and `runOnce()` for tests driving a manual clock. */
export interface DwellWorker {
  readonly id: string;
  /** Fires every timer due now (round after round while rounds store some); returns the events stored. */
  runOnce(): Promise<number>;
  start(signal: WakeSignal, pollMs: number): void;
  stop(): Promise<void>;
}

interface DwellJob extends ClaimedJob {
  workspaceId: string;
  visits: DueVisit[];
  now: Date;
}

interface DwellOutcome {
  workspaceId: string;
  fired: FiredVisits | undefined;
}

/** Visits read per claim: a round's worth, split into one job per workspace. */
const VISITS_PER_CLAIM = 200;
const SKIPPED_RETRY_MS = 10;
const FAILED_RETRY_MS = 1000;

const visitKey = (v: DueVisit): string => `${v.deviceId}\u0000${v.geofenceId}`;

function dwellJobKind(o: DwellWorkerOptions): JobKind<DwellJob, DwellOutcome> {
  const firing = new Set<string>();
  /** Visit key → monotonic ms before which it is not taken again. */
  const notBefore = new Map<string, number>();
  const holdBack = (visits: readonly DueVisit[], ms: number) => {
    const until = performance.now() + ms;
    for (const v of visits) notBefore.set(visitKey(v), until);
  };
  const available = (v: DueVisit, at: number): boolean => {
    const key = visitKey(v);
    if (firing.has(key)) return false;
    const until = notBefore.get(key);
    if (until === undefined) return true;
    if (until > at) return false;
    notBefore.delete(key);
    return true;
  };
  return {
    name: 'dwell timer',
    async claim(_workerId, limit, now) {
      const at = performance.now();
      const byWorkspace = new Map<string, DueVisit[]>();
      for (const visit of await dueVisits(o.db, now, VISITS_PER_CLAIM)) {
        if (!available(visit, at)) continue;
        const list = byWorkspace.get(visit.workspaceId);
        if (list) list.push(visit);
        else if (byWorkspace.size < limit) byWorkspace.set(visit.workspaceId, [visit]);
      }
      const jobs: DwellJob[] = [];
      for (const [workspaceId, visits] of byWorkspace) {
        for (const v of visits) firing.add(visitKey(v));
        jobs.push({ id: uuidv7(), workspaceId, visits, now });
      }
      return jobs;
    },
    async execute(job) {
      try {
        const fired = await fireWorkspaceDwells(o, job.workspaceId, job.visits, job.now);
        holdBack(fired.skipped, SKIPPED_RETRY_MS);
        return { workspaceId: job.workspaceId, fired };
      } catch (error) {
        holdBack(job.visits, FAILED_RETRY_MS);
        throw error;
      } finally {
        for (const v of job.visits) firing.delete(visitKey(v));
      }
    },
    failure(job, error) {
      o.logger.error({ err: error, workspace: job.workspaceId }, 'firing dwell timers failed');
      return { workspaceId: job.workspaceId, fired: undefined };
    },
    async record(_workerId, outcomes) {
      for (const { workspaceId, fired } of outcomes) {
        if (fired && fired.events.length > 0) o.onFired?.(workspaceId, fired.events, fired.dispatch);
      }
    },
    // No lease to give back: a visit not fired stays due.
    async release() {},
    serialKey: (job) => job.workspaceId,
    async msUntilDue(now) {
      const next = await nextDwellDue(o.db);
      if (!next) return null;
      const dueIn = next.getTime() - now.getTime();
      if (dueIn > 0) return dueIn;
      // Due now but not claimed: held back until the earliest hold ends (a visit being fired
      // wakes the loop itself when its job ends).
      const at = performance.now();
      let heldFor: number | null = null;
      for (const until of notBefore.values()) heldFor = Math.min(heldFor ?? Infinity, until - at);
      return heldFor;
    },
  };
}

export function createDwellJobWorker(o: DwellWorkerOptions): DwellWorker {
  const worker = new JobWorker(dwellJobKind(o), {
    clock: o.clock,
    logger: o.logger,
    batchSize: 16,
    maxInFlight: 16,
  });
  return {
    id: worker.id,
    async runOnce() {
      let total = 0;
      for (;;) {
        const outcomes = await worker.runRound();
        let stored = 0;
        for (const { fired } of outcomes) stored += fired?.events.length ?? 0;
        total += stored;
        // Skipped visits (devices being ingested) are taken on a later round, not in a busy loop.
        if (stored === 0) return total;
      }
    },
    start: (signal, pollMs) => worker.start(signal, pollMs),
    stop: () => worker.stop(),
  };
}
