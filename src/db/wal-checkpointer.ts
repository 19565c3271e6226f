/**
 * WAL checkpoints off the event loop (ADR 008). node:sqlite runs every statement on the main
 * thread; SQLite's own automatic checkpoint runs inside the COMMIT that crosses the WAL threshold,
 * copying ~40 MB back into the database file and syncing it while every request waits (the p99 of
 * single-location ingestion). A worker thread with its own connection copies committed frames
 * continuously with PASSIVE checkpoints, which take no lock the writer needs. The writer's
 * automatic checkpoint stays on as the step that lets the WAL start over from the beginning: by
 * the time it runs, nearly all frames have been copied already, so it has little left to do.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';

export interface WalCheckpointerOptions {
  path: string;
  intervalMs: number;
  logger?: Logger;
}

/** SQLite's answer to a checkpoint: frames in the WAL, and how many of them are in the database. */
export interface CheckpointReport {
  log: number;
  checkpointed: number;
}

export class WalCheckpointer {
  readonly #worker: Worker;
  #last: CheckpointReport = { log: 0, checkpointed: 0 };
  #reports = 0;
  #nextRequest = 1;
  readonly #requests = new Map<number, { resolve(r: CheckpointReport): void; reject(e: Error): void }>();

  constructor(options: WalCheckpointerOptions) {
    this.#worker = new Worker(new URL('./wal-checkpoint-worker.ts', import.meta.url), {
      workerData: { path: options.path, intervalMs: options.intervalMs },
    });
    // Never keeps the process alive on its own; close() stops it cleanly.
    this.#worker.unref();
    this.#worker.on(
      'message',
      (message: Partial<CheckpointReport> & { error?: string; requestId?: number }) => {
        const request = message.requestId === undefined ? undefined : this.#requests.get(message.requestId);
        if (message.requestId !== undefined) this.#requests.delete(message.requestId);
        if (message.error) {
          options.logger?.warn({ error: message.error }, 'WAL checkpoint failed');
          request?.reject(new Error(message.error));
        } else if (message.log !== undefined && message.checkpointed !== undefined) {
          this.#last = { log: message.log, checkpointed: message.checkpointed };
          this.#reports += 1;
          request?.resolve(this.#last);
        }
      },
    );
    this.#worker.on('error', (error) =>
      options.logger?.error({ err: error }, 'WAL checkpoint thread failed'),
    );
  }

  /** Checkpoints reported so far. */
  get reports(): number {
    return this.#reports;
  }

  /** What the last checkpoint reported (for tests and diagnostics). */
  get last(): CheckpointReport {
    return this.#last;
  }

  /** A checkpoint run now (after everything committed so far), with its report. */
  checkpointNow(): Promise<CheckpointReport> {
    const id = this.#nextRequest++;
    return new Promise((resolve, reject) => {
      this.#requests.set(id, { resolve, reject });
      this.#worker.postMessage({ checkpoint: id });
    });
  }

  /** Runs a last checkpoint and ends the thread. */
  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    // Referenced again while stopping: otherwise a process with nothing else to do would exit
    // before the thread does, leaving whoever awaits close() unanswered (and the exit code 0).
    this.#worker.ref();
    this.#worker.postMessage('stop');
    await exited;
  }
}
