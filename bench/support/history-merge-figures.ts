/**
 * The history merge as bench:ingest sees it (ADR 008, "The staged history"). Ingestion stages
 * locations and the server's job engine merges them every few seconds, so a phase's server CPU
 * counts its merge only once the locations it stored have left the staged table: after each load,
 * `drain` waits for that before the bench reads the server's CPU. The merge's own CPU comes from
 * the server's /metrics (`history_merge_cpu_seconds_total` over `history_merged_locations_total`).
 */
import { DatabaseSync } from 'node:sqlite';
import { processCpuMs } from './load.ts';
import { countRows } from './postgres.ts';

/** The server's merge totals since it started. */
export interface MergeCounters {
  moved: number;
  cpuSeconds: number;
}

/** One phase's merge: what was left when its load stopped, and the merge's cost over the phase. */
export interface PhaseMerge {
  /** Locations still staged when the load stopped. */
  staged_at_stop: number;
  /** From the load's end until the staged table was empty and the merge had counted them. */
  drain_ms: number;
  /** Locations the merge moved during the phase (load and drain). */
  merged: number;
  /** The merge's own CPU over the phase. */
  cpu_ms: number;
  /**
   * The merge's own CPU per 1,000 of them, as the server counts it: its thread's time from a
   * chunk's start to its end. Requests the thread serves while a chunk waits (for the database on
   * PostgreSQL, for the connection on SQLite) fall inside too, so under load this can read high.
   */
  cpu_ms_per_1000: number;
  /**
   * A cross-check free of that: the server's CPU (all threads) from the load's end until drained,
   * per 1,000 locations staged at the load's end, when there were enough of them (null otherwise).
   * It includes the server's idle work while the merge waits for its interval.
   */
  drain_server_cpu_ms_per_1000: number | null;
}

/** Counts the staged locations through a read-only connection of the bench's own. */
export function sqliteStagedCount(file: string): () => number {
  return () => {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      return Number((db.prepare('select count(*) as n from locations_staged').get() as { n: number }).n);
    } finally {
      db.close();
    }
  };
}

export function postgresStagedCount(database: string): () => number {
  return () => countRows(database, 'locations_staged');
}

/** A counter's value in Prometheus' text format (0 when absent). */
function counter(text: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

const POLL_MS = 50;
/** Longer than any merge interval the bench runs with: a drain that takes this long is reported. */
const DRAIN_LIMIT_MS = 120_000;

export class MergeProbe {
  readonly #base: string;
  readonly #token: string;
  readonly #serverPid: number | undefined;
  readonly #stagedCount: () => number;

  constructor(options: {
    base: string;
    metricsToken: string;
    serverPid: number | undefined;
    stagedCount: () => number;
  }) {
    this.#base = options.base;
    this.#token = options.metricsToken;
    this.#serverPid = options.serverPid;
    this.#stagedCount = options.stagedCount;
  }

  async counters(): Promise<MergeCounters> {
    const res = await fetch(`${this.#base}/metrics`, {
      headers: { authorization: `Bearer ${this.#token}` },
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`GET /metrics → ${res.status} ${text.slice(0, 200)}`);
    return {
      moved: counter(text, 'history_merged_locations_total'),
      cpuSeconds: counter(text, 'history_merge_cpu_seconds_total'),
    };
  }

  /**
   * Waits until nothing is staged and the merge has counted at least `expected` locations since
   * `since`; call it as the load stops. The staged table is polled through the bench's own
   * connection, and /metrics read only once it is empty, so that the wait adds next to nothing to
   * the server's CPU. A merge adds to its totals when it ends, just after its last chunk commits:
   * two equal readings in a row say it has.
   */
  async drain(since: MergeCounters, expected: number): Promise<PhaseMerge> {
    const started = Date.now();
    const cpuAtStop = processCpuMs(this.#serverPid);
    const stagedAtStop = this.#stagedCount();
    let staged = stagedAtStop;
    let previous: MergeCounters | undefined;
    for (;;) {
      const now = staged === 0 ? await this.counters() : undefined;
      const waited = Date.now() - started;
      // Nothing staged and the totals holding still. `expected` only bounds the wait: rows written
      // straight into the per-device history (batches) are never merged.
      const settled =
        now !== undefined &&
        (now.moved - since.moved >= expected || waited > EXPECTED_WAIT_MS) &&
        previous?.moved === now.moved &&
        previous.cpuSeconds === now.cpuSeconds;
      if (now !== undefined && (settled || waited > DRAIN_LIMIT_MS)) {
        if (!settled) {
          console.warn(
            `history merge: ${now.moved - since.moved} of ${expected} locations merged after ${waited} ms; going on`,
          );
        }
        const drainCpuMs = (processCpuMs(this.#serverPid) ?? 0) - (cpuAtStop ?? 0);
        return phaseMerge(since, now, stagedAtStop, waited, drainCpuMs);
      }
      if (waited > DRAIN_LIMIT_MS * 2) throw new Error(`history merge: ${staged} locations still staged`);
      previous = now;
      await new Promise((r) => setTimeout(r, POLL_MS));
      staged = this.#stagedCount();
    }
  }

  /** Waits until nothing is staged and the merge's totals hold still (before a phase starts). */
  async settle(): Promise<MergeCounters> {
    await this.drain(await this.counters(), 0);
    return this.counters();
  }
}

/** How long a drain waits for the merge's totals to reach what the phase stored once nothing is staged. */
const EXPECTED_WAIT_MS = 3_000;

/** Below this many staged at the load's end, the drain's server CPU is mostly the idle wait for the merge. */
const DRAIN_FIGURE_FROM = 5_000;

function phaseMerge(
  since: MergeCounters,
  now: MergeCounters,
  stagedAtStop: number,
  drainMs: number,
  drainCpuMs: number,
): PhaseMerge {
  const merged = now.moved - since.moved;
  const cpuMs = (now.cpuSeconds - since.cpuSeconds) * 1000;
  return {
    staged_at_stop: stagedAtStop,
    drain_ms: drainMs,
    merged,
    cpu_ms: Math.round(cpuMs * 10) / 10,
    cpu_ms_per_1000: perThousand(cpuMs, merged),
    drain_server_cpu_ms_per_1000:
      stagedAtStop >= DRAIN_FIGURE_FROM ? perThousand(drainCpuMs, stagedAtStop) : null,
  };
}

const perThousand = (cpuMs: number, moved: number): number =>
  moved > 0 ? Math.round((cpuMs / moved) * 1000 * 100) / 100 : 0;

/** The merge's CPU per 1,000 locations over several phases together (0 when none moved). */
export function mergeCpuMsPer1000(phases: readonly PhaseMerge[]): number {
  return perThousand(
    phases.reduce((n, p) => n + p.cpu_ms, 0),
    phases.reduce((n, p) => n + p.merged, 0),
  );
}
