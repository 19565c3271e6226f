/**
 * A rolling-window request counter over an injectable clock (docs/decisions/011): the window is cut
 * into buckets (an hour into 60 one-minute buckets, a minute into 60 one-second buckets) and a
 * request is counted in its bucket until the whole bucket has left the window, i.e. for between
 * one window and one window plus one bucket. So no rolling window ever holds more than `limit`
 * accepted requests, and the answer "retry in N s" is exact: it is the moment the oldest buckets
 * that must leave for a slot to free up do leave. Refused requests are not counted.
 *
 * Two stores implement it: this one in process memory (synchronous, no allocation beyond a small
 * result object) and `redis-sliding-window.ts` (one EVALSHA per request) for several nodes.
 */

export interface WindowDecision {
  allowed: boolean;
  /** Requests counted in the window after this one. */
  count: number;
  /**
   * Milliseconds until the budget grows: when refused, until one request is allowed again (the
   * honest Retry-After); when allowed, until the oldest counted request leaves the window.
   */
  resetMs: number;
}

export interface WindowShape {
  windowMs: number;
  bucketMs: number;
}

export const HOUR_WINDOW: WindowShape = { windowMs: 3_600_000, bucketMs: 60_000 };
export const MINUTE_WINDOW: WindowShape = { windowMs: 60_000, bucketMs: 1_000 };

/** The store behind a limiter: memory answers synchronously, Redis with a promise. */
export interface WindowStore {
  consume(key: string, limit: number, nowMs: number): WindowDecision | Promise<WindowDecision>;
  /** Requests counted in the window now, without counting one. */
  peek(keys: readonly string[], nowMs: number): Promise<number[]>;
}

interface Entry {
  counts: Uint32Array;
  /** Absolute number of the newest bucket this entry has advanced to. */
  newest: number;
  /** Absolute number of the oldest bucket holding a count (meaningless while total is 0). */
  oldest: number;
  total: number;
}

const SWEEP_EVERY = 10_000;

export class MemoryWindowStore implements WindowStore {
  private readonly entries = new Map<string, Entry>();
  private readonly bucketMs: number;
  /** Buckets a request stays counted in: the window plus the bucket it fell in. */
  private readonly span: number;
  private insertsSinceSweep = 0;

  constructor(shape: WindowShape) {
    this.bucketMs = shape.bucketMs;
    this.span = Math.round(shape.windowMs / shape.bucketMs) + 1;
  }

  consume(key: string, limit: number, nowMs: number): WindowDecision {
    const bucket = Math.floor(nowMs / this.bucketMs);
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = { counts: new Uint32Array(this.span), newest: bucket, oldest: bucket, total: 0 };
      this.entries.set(key, entry);
      if (++this.insertsSinceSweep >= SWEEP_EVERY) this.sweep(bucket);
    } else {
      this.advance(entry, bucket);
    }
    const counts = entry.counts;
    const span = this.span;
    const current = entry.newest;
    if (entry.total >= limit) {
      // Walk from the oldest bucket until enough has left the window for one more request.
      let left = 0;
      for (let b = current - span + 1; b <= current; b++) {
        left += counts[b % span] ?? 0;
        if (entry.total - left < limit)
          return { allowed: false, count: entry.total, resetMs: (b + span) * this.bucketMs - nowMs };
      }
      // limit 0: nothing will ever be allowed in this window shape; say one full window.
      return { allowed: false, count: entry.total, resetMs: span * this.bucketMs };
    }
    counts[current % span] = (counts[current % span] ?? 0) + 1;
    if (entry.total++ === 0) entry.oldest = current;
    return { allowed: true, count: entry.total, resetMs: (entry.oldest + span) * this.bucketMs - nowMs };
  }

  async peek(keys: readonly string[], nowMs: number): Promise<number[]> {
    const bucket = Math.floor(nowMs / this.bucketMs);
    return keys.map((key) => {
      const entry = this.entries.get(key);
      if (!entry) return 0;
      this.advance(entry, bucket);
      return entry.total;
    });
  }

  /**
   * Drops the buckets that left the window since the entry was last used (at most once per bucket
   * of time, so the scans here are off the per-request path).
   */
  private advance(entry: Entry, bucket: number): void {
    if (bucket <= entry.newest) return; // same bucket, or a clock that went back: keep counting
    const span = this.span;
    if (bucket - entry.newest >= span) {
      entry.counts.fill(0);
      entry.total = 0;
    } else {
      for (let b = entry.newest + 1; b <= bucket; b++) {
        const slot = b % span;
        entry.total -= entry.counts[slot] ?? 0;
        entry.counts[slot] = 0;
      }
    }
    entry.newest = bucket;
    if (entry.total > 0 && entry.oldest <= bucket - span) {
      let b = bucket - span + 1;
      while ((entry.counts[b % span] ?? 0) === 0) b++;
      entry.oldest = b;
    }
  }

  /** Forgets keys idle for a whole window so memory follows the active keys, not all keys ever seen. */
  private sweep(bucket: number): void {
    this.insertsSinceSweep = 0;
    for (const [key, entry] of this.entries) if (bucket - entry.newest >= this.span) this.entries.delete(key);
  }
}
