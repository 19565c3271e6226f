/**
 * The timers a background job waits on, behind an interface so that tests move time by hand
 * instead of sleeping (the clock seam of `src/shared/clock.ts`, for delays).
 */
export interface JobTimers {
  /** Calls `callback` once after `delayMs`; returns a handle for `clearTimeout`. */
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The process's timers, unref'd: a pending chore never keeps the process alive. */
export const realTimers: JobTimers = {
  setTimeout(callback, delayMs) {
    const timer = setTimeout(callback, delayMs);
    timer.unref();
    return timer;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};
