/**
 * The one job loop (ADR 010, ADR 020): claim due jobs in batches (a lease each) → execute them →
 * record outcomes in groups (group commit) → release what was not started. Webhook deliveries and
 * workflow actions are kinds (`JobKind`): the kind owns its table, its claim and its outcome rules;
 * this loop owns concurrency, ordering, group commit, outages and shutdown. `runOnce()` does one
 * claim → execute → record round: tests drive retry schedules with a manual clock.
 *
 * Shutdown (contract §0): `stop()` stops claiming, gives back the leases of claimed jobs not yet
 * started at once (another worker takes them without waiting for the leases to run out), lets
 * attempts in flight finish (each bounded by its timeout) and records them. A crash instead leaves
 * leases to run out: the attempt is made again (same attempt number) — at least once, never lost.
 *
 * Outcomes that cannot be recorded while the database is unreachable are kept and recorded once it
 * answers: recording is guarded by the lease, and an attempt made is not made twice just because
 * the database restarted.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isConnectionFailure } from '../db/availability.ts';
import type { Clock } from '../shared/clock.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { WakeSignal } from './wake-signal.ts';

export interface ClaimedJob {
  readonly id: string;
}

/** What a domain registers to have its jobs run: a small module, not a copy of the loop. */
export interface JobKind<J extends ClaimedJob, R> {
  /** In logs: "delivery", "workflow action". */
  readonly name: string;
  /** Claims up to `limit` due jobs, leased to `workerId` (in a transaction of its own). */
  claim(workerId: string, limit: number, now: Date): Promise<J[]>;
  /** One attempt. A throw is turned into `failure(...)`: a failed attempt, never a crash. */
  execute(job: J): Promise<R>;
  failure(job: J, error: unknown, startedAt: Date): R;
  /**
   * Records finished attempts in one transaction, then says what must be said (notifications).
   * A connection failure keeps them for the next try; any other error drops them (their leases
   * run out and they are attempted again).
   */
  record(workerId: string, results: readonly R[]): Promise<void>;
  /** Gives back claimed jobs that were not started. */
  release(workerId: string, ids: readonly string[], now: Date): Promise<void>;
  /** Jobs of one key run one after another, in claim order (a webhook's deliveries keep event order). */
  serialKey?(job: J): string;
  /**
   * Before each job of a serial chain: makes sure the leases of `rest` (the job first) outlast its
   * attempt; returns the ids whose lease is lost. MUST run before each attempt of a chain: an
   * attempt after the lease ran out could duplicate another worker's.
   */
  keepLeases?(workerId: string, rest: readonly J[]): Promise<ReadonlySet<string>>;
  /**
   * How long until the kind's next job falls due, when it knows (a dwell timer set for later): an
   * idle worker then wakes at that moment instead of after the poll interval. Null: unknown.
   */
  msUntilDue?(now: Date): Promise<number | null>;
}

export interface JobWorkerOptions {
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Jobs claimed per round. */
  batchSize: number;
  /** Jobs in flight at most (claimed and not yet finished). */
  maxInFlight: number;
  workerId?: string;
}

/** Group commit: at most this long after an attempt ends, or at once at FLUSH_AT waiting. */
const FLUSH_DELAY_MS = 3;
const FLUSH_AT = 200;
/** Between tries to record outcomes while the database is unreachable. */
const RECORD_RETRY_MS = 500;
/** The shortest idle wait: a job due "now" that could not be claimed is not polled for in a busy loop. */
const MIN_IDLE_MS = 10;

export class JobWorker<J extends ClaimedJob, R> {
  readonly id: string;
  private inFlight = 0;
  private results: R[] = [];
  private flushing: Promise<void> | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private readonly chains = new Set<Promise<unknown>>();
  /** Claimed jobs whose attempt has not started: what `stop()` gives back at once. */
  private readonly waiting = new Set<string>();
  /** Jobs given back (or whose lease was lost): their chains skip them. */
  private readonly skipped = new Set<string>();
  private wakeLoop: (() => void) | undefined;
  private wanted = false;
  private unsubscribe: (() => void) | undefined;

  private readonly kind: JobKind<J, R>;
  private readonly o: JobWorkerOptions;

  constructor(kind: JobKind<J, R>, options: JobWorkerOptions) {
    this.kind = kind;
    this.o = options;
    const o = options;
    this.id = o.workerId ?? `${kind.name.replace(/\s+/g, '-')}-worker-${uuidv7()}`;
  }

  /** One round: claim a batch, run it, record the outcomes. Returns how many were claimed. */
  async runOnce(): Promise<number> {
    return (await this.round()).claimed;
  }

  /** One round, returning the outcomes of this round's attempts once they are recorded. */
  async runRound(): Promise<R[]> {
    return (await this.round()).outcomes;
  }

  private async round(): Promise<{ claimed: number; outcomes: R[] }> {
    const claimed = await this.claim(this.o.batchSize);
    const outcomes = (await Promise.all(this.launch(claimed))).flat();
    await this.flush();
    return { claimed: claimed.length, outcomes };
  }

  /** Runs until `stop()`: claims whenever there is room and work, else waits for `signal` or `pollMs`. */
  start(signal: WakeSignal, pollMs: number): void {
    if (this.loop) return;
    // A notify while the loop is busy claiming must not be lost: it is remembered in `wanted`.
    this.unsubscribe = signal.subscribe(() => {
      this.wanted = true;
      this.wakeLoop?.();
    });
    this.loop = (async () => {
      const full = Math.min(this.o.batchSize, this.o.maxInFlight);
      while (!this.stopping) {
        try {
          const room = Math.min(this.o.batchSize, this.o.maxInFlight - this.inFlight);
          // Claim in sizeable batches: a claim per few jobs would cost more than the jobs.
          if (room < full / 2) {
            await this.pause(pollMs);
            continue;
          }
          this.wanted = false;
          const claimed = await this.claim(room);
          if (claimed.length > 0) {
            // Not awaited: the next claim runs while these run (chains never reject).
            void Promise.all(this.launch(claimed));
            continue;
          }
          if (!this.wanted) await this.pause(await this.idleMs(pollMs));
        } catch (error) {
          this.o.logger.error({ err: error, worker: this.id }, `${this.kind.name} worker round failed`);
          await this.pause(1000);
        }
      }
    })();
  }

  /**
   * Stops claiming, gives back every claimed job not yet started (at once, not after the attempts
   * in flight), then waits for those in flight and records their outcomes.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.wakeLoop?.();
    await this.loop;
    const givenBack = [...this.waiting];
    for (const id of givenBack) this.skipped.add(id);
    this.waiting.clear();
    this.o.logger.info(
      { worker: this.id, given_back: givenBack.length, in_flight: this.inFlight - givenBack.length },
      `${this.kind.name} worker stopping: claimed jobs not started given back, attempts in flight finishing`,
    );
    const released =
      givenBack.length === 0
        ? Promise.resolve()
        : this.kind.release(this.id, givenBack, this.o.clock.now()).catch((error: unknown) =>
            // Their leases run out instead: another worker takes them a little later.
            this.o.logger.warn(
              { err: error, worker: this.id },
              `could not give back claimed ${this.kind.name} jobs`,
            ),
          );
    await Promise.all([...this.chains, released]);
    await this.flush();
  }

  /** Claimed jobs not started yet (tests read it). */
  get waitingCount(): number {
    return this.waiting.size;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        if (self.wakeLoop === done) self.wakeLoop = undefined;
        resolve();
      }
      this.wakeLoop = done;
    });
  }

  /** The poll interval, or less when the kind knows its next job falls due sooner. */
  private async idleMs(pollMs: number): Promise<number> {
    const until = this.kind.msUntilDue ? await this.kind.msUntilDue(this.o.clock.now()) : null;
    return until === null ? pollMs : Math.max(MIN_IDLE_MS, Math.min(pollMs, until));
  }

  private async claim(limit: number): Promise<J[]> {
    const claimed = await this.kind.claim(this.id, limit, this.o.clock.now());
    this.inFlight += claimed.length;
    for (const job of claimed) this.waiting.add(job.id);
    return claimed;
  }

  /** Starts one chain per serial key (each job alone when the kind has none); each yields its outcomes. */
  private launch(claimed: J[]): Promise<R[]>[] {
    const groups = new Map<string, J[]>();
    for (const job of claimed) {
      const key = this.kind.serialKey?.(job) ?? job.id;
      const list = groups.get(key);
      if (list) list.push(job);
      else groups.set(key, [job]);
    }
    const started: Promise<R[]>[] = [];
    for (const list of groups.values()) {
      const chain: Promise<R[]> = this.runChain(list)
        .catch((error: unknown) => {
          this.o.logger.error({ err: error, worker: this.id }, `${this.kind.name} chain failed`);
          return [];
        })
        .finally(() => {
          this.chains.delete(chain);
          // Room in flight again: the loop may claim more.
          this.wakeLoop?.();
        });
      this.chains.add(chain);
      started.push(chain);
    }
    return started;
  }

  private async runChain(list: J[]): Promise<R[]> {
    const outcomes: R[] = [];
    let lost: ReadonlySet<string> = new Set();
    for (const [index, job] of list.entries()) {
      if (this.kind.keepLeases && !this.skipped.has(job.id) && !lost.has(job.id)) {
        const rest = list.slice(index).filter((j) => !lost.has(j.id));
        try {
          const nowLost = await this.kind.keepLeases(this.id, rest);
          if (nowLost.size > 0) lost = new Set([...lost, ...nowLost]);
        } catch (error) {
          // Unsure whether we still hold them: run none; their leases run out and they are retried.
          this.o.logger.error({ err: error, worker: this.id }, `extending ${this.kind.name} leases failed`);
          lost = new Set([...lost, ...rest.map((j) => j.id)]);
        }
      }
      this.waiting.delete(job.id);
      // Checked after the last await before the attempt: `stop()` may have given it back meanwhile.
      if (this.skipped.delete(job.id) || lost.has(job.id)) {
        this.inFlight -= 1;
        continue;
      }
      const startedAt = this.o.clock.now();
      let result: R;
      try {
        result = await this.kind.execute(job);
      } catch (error) {
        this.o.logger.error({ err: error, job: job.id }, `${this.kind.name} attempt could not be made`);
        result = this.kind.failure(job, error, startedAt);
      }
      this.inFlight -= 1;
      outcomes.push(result);
      this.results.push(result);
      this.scheduleFlush();
    }
    return outcomes;
  }

  private scheduleFlush(): void {
    if (this.results.length >= FLUSH_AT) {
      void this.flush();
      return;
    }
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, FLUSH_DELAY_MS);
  }

  /** Group commit: one transaction records everything finished since the last one. */
  private flush(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (this.flushing) return this.flushing.then(() => (this.results.length > 0 ? this.flush() : undefined));
    if (this.results.length === 0) return Promise.resolve();
    this.flushing = (async () => {
      while (this.results.length > 0) {
        const batch = this.results;
        this.results = [];
        try {
          await this.kind.record(this.id, batch);
        } catch (error) {
          if (isConnectionFailure(error)) {
            // Kept, not dropped: recorded once the database answers, so nothing runs twice.
            this.o.logger.warn(
              { err: error, worker: this.id, count: batch.length },
              `database unavailable: ${this.kind.name} outcomes kept until it answers`,
            );
            this.results = batch.concat(this.results);
            await delay(RECORD_RETRY_MS);
            continue;
          }
          // The leases run out and the jobs are attempted again: at least once, never lost.
          this.o.logger.error(
            { err: error, worker: this.id, count: batch.length },
            `recording ${this.kind.name} attempts failed`,
          );
        }
      }
    })().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }
}
