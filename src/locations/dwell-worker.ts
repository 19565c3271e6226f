/**
 * The dwell worker of one process (contract §4.5, ADR 015): fires due dwell timers, then sleeps
 * until the next one is due (or the poll interval, which finds timers other nodes created), woken
 * early when this node stores a timer. `runOnce()` fires what is due now: tests drive it with a
 * manual clock. Timers live in the database, so a restart loses none and fires overdue ones at once.
 */
import type { Logger } from 'pino';
import type { Db, DialectCapabilities } from '../db/database.ts';
import type { WakeSignal } from '../jobs/wake-signal.ts';
import type { Clock } from '../shared/clock.ts';
import { nextDwellDue } from './dwell.repository.ts';
import { type FiredBatch, fireDueDwells } from './dwell-firing.service.ts';

export interface DwellWorkerOptions {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  logger: Pick<Logger, 'error'>;
  /** After a batch is stored: wake the dispatcher, count the events against the quota. */
  onFired?: (batch: FiredBatch) => void;
}

export class DwellWorker {
  readonly #o: DwellWorkerOptions;
  #stopping = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #unsubscribe: (() => void) | undefined;

  constructor(options: DwellWorkerOptions) {
    this.#o = options;
  }

  /** Fires every timer due now; returns how many dwell events were stored. */
  async runOnce(): Promise<number> {
    let total = 0;
    for (;;) {
      const batch = await fireDueDwells(this.#o, this.#o.clock.now());
      let stored = 0;
      for (const events of batch.events.values()) stored += events.length;
      if (stored > 0) this.#o.onFired?.(batch);
      total += stored;
      // Skipped visits (devices being ingested) are taken on the next round, not in a busy loop.
      if (stored === 0) return total;
    }
  }

  start(signal: WakeSignal, pollMs: number): void {
    if (this.#loop) return;
    this.#unsubscribe = signal.subscribe(() => this.#wake?.());
    this.#loop = (async () => {
      while (!this.#stopping) {
        try {
          await this.runOnce();
          const next = await nextDwellDue(this.#o.db);
          const untilNext = next ? next.getTime() - this.#o.clock.now().getTime() : pollMs;
          await this.#pause(Math.max(10, Math.min(pollMs, untilNext)));
        } catch (error) {
          this.#o.logger.error({ err: error }, 'dwell worker round failed');
          await this.#pause(1000);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#unsubscribe?.();
    this.#wake?.();
    await this.#loop;
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}
