/**
 * A rolling-window request counter over an injectable clock (docs/decisions/011). Time is cut into
 * one-second buckets; a request counts in its bucket until that bucket is a whole window old, i.e.
 * for between (window − 1 s) and one window. Hence (contract §7):
 * - no stretch of (window − 1 s) ever holds more than `limit` accepted requests;
 * - "retry in N s" is exact and never longer than the window: it is the moment the oldest bucket
 *   that must leave for a slot to free up does leave, and that bucket is at most a window old.
 * Refused requests are not counted.
 *
 * Two stores implement it: this one in process memory, and `redis-sliding-window.ts` for several
 * nodes sharing one budget.
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

/** The width of a bucket: Retry-After is stated in whole seconds, so finer buckets would buy nothing. */
export const BUCKET_MS = 1000;

export const HOUR_MS = 3_600_000;
export const MINUTE_MS = 60_000;

/** The store behind a limiter. */
export interface WindowStore {
  /** The window's length in milliseconds (a whole number of seconds). */
  readonly windowMs: number;
  consume(key: string, limit: number, nowMs: number): Promise<WindowDecision>;
  /** Requests counted in the window now, without counting one. */
  peek(keys: readonly string[], nowMs: number): Promise<number[]>;
}

/** The whole seconds a client must wait for `resetMs` to pass: at least 1, at most the window. */
export function wholeSeconds(resetMs: number, windowMs: number): number {
  return Math.min(windowMs / 1000, Math.max(1, Math.ceil(resetMs / 1000)));
}

export function bucketsIn(windowMs: number): number {
  if (!Number.isInteger(windowMs / BUCKET_MS) || windowMs < BUCKET_MS)
    throw new Error(`A rolling window must be a whole number of seconds, got ${windowMs} ms`);
  return windowMs / BUCKET_MS;
}

/**
 * One key's non-empty buckets, oldest first, in a ring that grows on demand: a key holds at most
 * one entry per second of the window, and only as many as seconds in which it was used.
 */
interface Entry {
  buckets: Float64Array;
  counts: Uint32Array;
  head: number;
  size: number;
  total: number;
}

const INITIAL_CAPACITY = 4;
const SWEEP_EVERY = 10_000;

export class MemoryWindowStore implements WindowStore {
  readonly windowMs: number;
  private readonly entries = new Map<string, Entry>();
  private readonly span: number;
  private insertsSinceSweep = 0;

  constructor(windowMs: number) {
    this.windowMs = windowMs;
    this.span = bucketsIn(windowMs);
  }

  async consume(key: string, limit: number, nowMs: number): Promise<WindowDecision> {
    const bucket = Math.floor(nowMs / BUCKET_MS);
    const entry = this.entryFor(key, bucket);
    if (entry.total >= limit) {
      return { allowed: false, count: entry.total, resetMs: this.refusedResetMs(entry, limit, nowMs) };
    }
    this.add(entry, bucket);
    const oldest = entry.buckets[entry.head] ?? bucket;
    return { allowed: true, count: entry.total, resetMs: this.leavesAt(oldest) - nowMs };
  }

  async peek(keys: readonly string[], nowMs: number): Promise<number[]> {
    const bucket = Math.floor(nowMs / BUCKET_MS);
    return keys.map((key) => {
      const entry = this.entries.get(key);
      if (!entry) return 0;
      this.expire(entry, bucket);
      return entry.total;
    });
  }

  /** The key's entry with the buckets a whole window old dropped. */
  private entryFor(key: string, bucket: number): Entry {
    const existing = this.entries.get(key);
    if (existing !== undefined) {
      this.expire(existing, bucket);
      return existing;
    }
    if (++this.insertsSinceSweep >= SWEEP_EVERY) this.sweep(bucket);
    const entry: Entry = {
      buckets: new Float64Array(INITIAL_CAPACITY),
      counts: new Uint32Array(INITIAL_CAPACITY),
      head: 0,
      size: 0,
      total: 0,
    };
    this.entries.set(key, entry);
    return entry;
  }

  private leavesAt(bucket: number): number {
    return (bucket + this.span) * BUCKET_MS;
  }

  /** Walks from the oldest bucket until enough has left the window for one more request. */
  private refusedResetMs(entry: Entry, limit: number, nowMs: number): number {
    const capacity = entry.buckets.length;
    let left = 0;
    for (let i = 0; i < entry.size; i++) {
      const at = (entry.head + i) % capacity;
      left += entry.counts[at] ?? 0;
      if (entry.total - left < limit) return this.leavesAt(entry.buckets[at] ?? 0) - nowMs;
    }
    // limit 0: nothing is ever allowed; say one whole window.
    return this.windowMs;
  }

  private add(entry: Entry, bucket: number): void {
    entry.total += 1;
    const capacity = entry.buckets.length;
    if (entry.size > 0) {
      const tail = (entry.head + entry.size - 1) % capacity;
      // Same second, or a clock that went back: count it in the newest bucket.
      if ((entry.buckets[tail] ?? 0) >= bucket) {
        entry.counts[tail] = (entry.counts[tail] ?? 0) + 1;
        return;
      }
    }
    if (entry.size === capacity) this.grow(entry);
    const at = (entry.head + entry.size) % entry.buckets.length;
    entry.buckets[at] = bucket;
    entry.counts[at] = 1;
    entry.size += 1;
  }

  /** Drops the buckets a whole window old. */
  private expire(entry: Entry, bucket: number): void {
    const capacity = entry.buckets.length;
    while (entry.size > 0 && (entry.buckets[entry.head] ?? 0) <= bucket - this.span) {
      entry.total -= entry.counts[entry.head] ?? 0;
      entry.head = (entry.head + 1) % capacity;
      entry.size -= 1;
    }
  }

  private grow(entry: Entry): void {
    const capacity = entry.buckets.length;
    const buckets = new Float64Array(capacity * 2);
    const counts = new Uint32Array(capacity * 2);
    for (let i = 0; i < entry.size; i++) {
      const from = (entry.head + i) % capacity;
      buckets[i] = entry.buckets[from] ?? 0;
      counts[i] = entry.counts[from] ?? 0;
    }
    entry.buckets = buckets;
    entry.counts = counts;
    entry.head = 0;
  }

  /** Forgets keys idle for a whole window so memory follows the active keys, not all keys ever seen. */
  private sweep(bucket: number): void {
    this.insertsSinceSweep = 0;
    for (const [key, entry] of this.entries) {
      this.expire(entry, bucket);
      if (entry.total === 0) this.entries.delete(key);
    }
  }
}
