/**
 * The history merge on /metrics: how many staged locations this node has merged, the CPU it spent
 * doing so, its failures and its last success (ADR 008), read from the node's `HistoryMergeState`
 * when scraped.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { HistoryMergeState } from './history-merge.ts';

export function registerHistoryMergeMetrics(registry: Registry, state: HistoryMergeState): void {
  new Counter({
    name: 'history_merged_locations_total',
    help: 'Staged locations moved into the per-device history by this node.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(state.totals.moved);
    },
  });
  new Counter({
    name: 'history_merge_cpu_seconds_total',
    // On PostgreSQL a chunk mostly waits for the database, and whatever else the thread runs
    // meanwhile counts too: an upper bound there, close on SQLite, whose statements run on the thread.
    help: 'CPU time of the thread running the history merge while its chunks ran (an upper bound: other work during a chunk counts too).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(state.totals.cpuMicros / 1e6);
    },
  });
  new Counter({
    name: 'history_merge_failures_total',
    help: 'History merges of this node that failed (each is logged; the next one runs at its interval).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(state.failures);
    },
  });
  new Gauge({
    name: 'history_merge_last_success_timestamp_seconds',
    // Alert on time() minus this: merges stalled leave locations staged, and history reads slower.
    help: 'When the last history merge of this node ended without error, in Unix seconds (0: none yet; nodes with RUN_WORKER=false never merge).',
    registers: [registry],
    collect() {
      this.set(state.lastSuccessAt === null ? 0 : state.lastSuccessAt.getTime() / 1000);
    },
  });
  new Gauge({
    name: 'history_merge_longest_chunk_seconds',
    help: 'The longest merge chunk since start, begin to commit (on SQLite, the longest the writer was held by a merge).',
    registers: [registry],
    collect() {
      this.set(state.totals.longestChunkMs / 1000);
    },
  });
}
