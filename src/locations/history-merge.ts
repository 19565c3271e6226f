/**
 * The history merge job (ADR 008, "The staged history"): every HISTORY_MERGE_INTERVAL, or sooner
 * once this node has staged HISTORY_MERGE_ROWS locations since its last merge, it moves the staged
 * locations into the per-device history in chunks (history-merge.repository.ts). Each chunk is its
 * own short transaction, and the event loop turns between chunks, so on SQLite requests wait for
 * one chunk at most, never for a whole merge. Every node runs it; chunks never overlap (SQLite's
 * one writer; `SKIP LOCKED` on PostgreSQL).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db, DialectCapabilities } from '../db/database.ts';
import type { WakeSignal } from '../jobs/wake-signal.ts';
import type { Clock } from '../shared/clock.ts';
import { mergeStagedChunk } from './history-merge.repository.ts';

/**
 * Rows per chunk. SQLite holds its one writer for a chunk: 500 rows take ~5–10 ms, and smaller
 * chunks cost more per row (ADR 008, "The staged history"). PostgreSQL blocks no one and pays a
 * round trip per chunk.
 */
export function defaultChunkRows(capabilities: DialectCapabilities): number {
  return capabilities.rowLocks ? 5_000 : 500;
}

export interface MergeResult {
  /** Rows that left the staged table (moved, or dropped with their deleted device). */
  moved: number;
  chunks: number;
  /** This thread's CPU time inside the chunks, in microseconds (bench:ingest prints it per 1,000). */
  cpuMicros: number;
  /** The longest chunk, start to commit, in milliseconds: how long SQLite's writer was held at most. */
  longestChunkMs: number;
}

function threadCpuMicros(): number {
  const { user, system } = process.threadCpuUsage();
  return user + system;
}

/**
 * Merges until the staged table is empty (or `shouldStop` says so between chunks). Rows staged
 * meanwhile are taken too: under a steady load a merge ends once it has caught up.
 */
export async function mergeStagedLocations(
  db: Db,
  capabilities: DialectCapabilities,
  options: { chunkRows?: number; shouldStop?: () => boolean } = {},
): Promise<MergeResult> {
  const chunkRows = options.chunkRows ?? defaultChunkRows(capabilities);
  const shouldStop = options.shouldStop ?? (() => false);
  const result: MergeResult = { moved: 0, chunks: 0, cpuMicros: 0, longestChunkMs: 0 };
  const timed = async (chunk: () => Promise<number>): Promise<number> => {
    const cpuBefore = threadCpuMicros();
    const started = performance.now();
    const moved = await chunk();
    result.longestChunkMs = Math.max(result.longestChunkMs, performance.now() - started);
    result.cpuMicros += threadCpuMicros() - cpuBefore;
    result.moved += moved;
    if (moved > 0) result.chunks++;
    return moved;
  };
  // The oldest rows, chunk after chunk. On SQLite, chunks in arrival order write fewer pages than
  // chunks of whole devices: the history's key and workspace indexes take rows in arrival order,
  // and a chunk of a few devices' rows from the whole backlog lands on hundreds of their leaves.
  for (;;) {
    const moved = await timed(() => mergeStagedChunk(db, capabilities, chunkRows));
    if (moved < chunkRows || shouldStop()) return result;
    // Let requests in between chunks.
    await nextTurn();
  }
}

/**
 * A node's side of the merge: wakes it early once enough locations were staged on this node since
 * the last one, and keeps its totals (served on /metrics).
 */
export class HistoryMergeState {
  /** Totals of this node's merges since it started. */
  readonly totals: MergeResult = { moved: 0, chunks: 0, cpuMicros: 0, longestChunkMs: 0 };
  /** Merges that failed (the database unreachable, say); the next one retries at its interval. */
  failures = 0;
  /**
   * When this node's last merge ended without error (null: none yet). An operator alerts on its
   * age: while merges fail, the staged table grows and every history read scans more of it.
   */
  lastSuccessAt: Date | null = null;
  #sinceMerge = 0;
  readonly #signal: WakeSignal;
  readonly #thresholdRows: number;
  readonly #clock: Clock;

  constructor(signal: WakeSignal, thresholdRows: number, clock: Clock) {
    this.#signal = signal;
    this.#thresholdRows = thresholdRows;
    this.#clock = clock;
  }

  /** Ingestion committed `count` staged locations. */
  staged(count: number): void {
    this.#sinceMerge += count;
    if (this.#sinceMerge >= this.#thresholdRows) {
      this.#sinceMerge = 0;
      this.#signal.notify();
    }
  }

  record(result: MergeResult): void {
    this.totals.moved += result.moved;
    this.totals.chunks += result.chunks;
    this.totals.cpuMicros += result.cpuMicros;
    this.totals.longestChunkMs = Math.max(this.totals.longestChunkMs, result.longestChunkMs);
    this.lastSuccessAt = this.#clock.now();
  }

  failed(): void {
    this.failures++;
  }
}

export interface HistoryMerger {
  start(signal: WakeSignal, intervalMs: number): void;
  /** Ends the loop after the chunk in progress (each chunk is atomic: nothing is left half done). */
  stop(): Promise<void>;
}

export interface HistoryMergerOptions {
  db: Db;
  capabilities: DialectCapabilities;
  logger: Pick<Logger, 'error' | 'debug'>;
  state?: HistoryMergeState;
  chunkRows?: number;
}

/** One merge of the loop: its outcome recorded in `state`, a failure logged, never thrown. */
export async function runHistoryMerge(
  options: HistoryMergerOptions,
  shouldStop: () => boolean = () => false,
): Promise<void> {
  try {
    const result = await mergeStagedLocations(options.db, options.capabilities, {
      ...(options.chunkRows === undefined ? {} : { chunkRows: options.chunkRows }),
      shouldStop,
    });
    options.state?.record(result);
    if (result.moved > 0) options.logger.debug({ job: 'history-merge', ...result }, 'history merged');
  } catch (error) {
    options.state?.failed();
    options.logger.error({ err: error, job: 'history-merge' }, 'history merge failed');
  }
}

export function createHistoryMerger(options: HistoryMergerOptions): HistoryMerger {
  let stopping = false;
  let loop: Promise<void> | undefined;
  let wake: WakeSignal | undefined;
  return {
    start(signal, intervalMs) {
      wake = signal;
      loop = (async () => {
        while (!stopping) {
          await runHistoryMerge(options, () => stopping);
          if (!stopping) await signal.wait(intervalMs);
        }
      })();
    },
    async stop() {
      stopping = true;
      wake?.notify();
      await loop;
    },
  };
}
