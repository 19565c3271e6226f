/**
 * One load at a time per key. The request-path caches (API keys, sessions, profiles, plans, quota
 * state) expire every few seconds; without this, every request arriving while the entry is being
 * reloaded starts its own load — 64 concurrent connections meant 64 identical queries at once each
 * time an entry expired, queued in front of the requests' own work (a latency spike every TTL).
 * Callers that arrive during a load share its promise.
 */
export class SingleFlight<K, V> {
  readonly #pending = new Map<K, Promise<V>>();

  run(key: K, load: () => Promise<V>): Promise<V> {
    const pending = this.#pending.get(key);
    if (pending) return pending;
    const started = load().finally(() => {
      if (this.#pending.get(key) === started) this.#pending.delete(key);
    });
    this.#pending.set(key, started);
    return started;
  }

  /** After an invalidation: later callers start a fresh load instead of joining one that began before it. */
  forget(key: K): void {
    this.#pending.delete(key);
  }

  clear(): void {
    this.#pending.clear();
  }
}
