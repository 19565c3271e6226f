/**
 * A wake-up call between the parts of one process: ingestion commits → the outbox dispatcher,
 * new deliveries → the worker. Notifications are coalesced (a sleeper wakes once however many
 * arrived) and never lost: a notify while nobody waits makes the next wait return at once.
 * Other nodes' work is found by the sleepers' poll interval instead.
 */
export class WakeSignal {
  private pending = false;
  private waiters: Array<() => void> = [];
  private listeners: Array<() => void> = [];

  /** Calls `listener` on every notify (for a loop that also sleeps on other things). */
  subscribe(listener: () => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  notify(): void {
    for (const listener of this.listeners) listener();
    if (this.waiters.length === 0) {
      this.pending = true;
      return;
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves on the next notify (or at once if one is pending), or after `timeoutMs`. */
  wait(timeoutMs: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.push(done);
    });
  }
}

/** The signals of the webhook engine, one pair per process (src/deps.ts). */
export interface JobSignals {
  /** Events were committed: the outbox has rows to dispatch. */
  outbox: WakeSignal;
  /** Deliveries became due: new ones, a test, a dead-letter retry. */
  deliveries: WakeSignal;
  /** Workflow action jobs became due: new runs, a test, a retry (ADR 014). */
  workflowActions: WakeSignal;
  /** Dwell timers may have come due sooner than the worker planned to look (ADR 015). */
  dwell: WakeSignal;
  /** An e-mail was stored for sending (src/mail/mailer.ts). */
  mail: WakeSignal;
  /** A "retry all matching" dead-letter job was asked for, or has another batch (ADR 018). */
  deadLetterRetries: WakeSignal;
  /** Many locations were staged: merge them into the per-device history now (ADR 008). */
  historyMerge: WakeSignal;
}

export function createJobSignals(): JobSignals {
  return {
    outbox: new WakeSignal(),
    deliveries: new WakeSignal(),
    workflowActions: new WakeSignal(),
    dwell: new WakeSignal(),
    mail: new WakeSignal(),
    deadLetterRetries: new WakeSignal(),
    historyMerge: new WakeSignal(),
  };
}
