/**
 * One task at a time per key, in arrival order; tasks of different keys run side by side. Used where
 * the database would serialise the tasks anyway (a lock they all take): waiting here costs nothing,
 * while waiting in the database holds a pool connection that other requests need.
 */
export class KeyedQueue<K> {
  readonly #tails = new Map<K, Promise<void>>();

  run<T>(key: K, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key);
    // A failed task does not stop the ones behind it.
    const result = previous ? previous.then(task) : task();
    const tail = result.then(
      () => {},
      () => {},
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }

  /** Keys with a task running or waiting (for tests: the map must not grow). */
  get size(): number {
    return this.#tails.size;
  }
}
