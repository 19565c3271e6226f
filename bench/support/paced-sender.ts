/**
 * Load at a sustained rate for the end-to-end benchmarks: every `tickMs` one request carrying
 * rate × tick items is sent, without waiting for earlier answers, on a fixed schedule (a late
 * tick is sent at once, never skipped), so the offered rate does not bend to the server's speed.
 */
import { performance } from 'node:perf_hooks';

export interface PacedRun {
  /** `performance.now()` when the first request was due. */
  startAt: number;
  /** Items sent. */
  items: number;
  /** Time from sending each request to its answer, ms. */
  answerMs: number[];
}

export async function sendAtRate(options: {
  rate: number;
  seconds: number;
  tickMs?: number;
  /** Sends one request of `count` items; `sentAt` is its `performance.now()`. */
  send: (count: number, sentAt: number) => Promise<unknown>;
}): Promise<PacedRun> {
  const tickMs = options.tickMs ?? 10;
  const perTick = Math.max(1, Math.round((options.rate * tickMs) / 1000));
  const ticks = Math.round((options.seconds * 1000) / tickMs);
  const startAt = performance.now();
  const inFlight: Promise<unknown>[] = [];
  const answerMs: number[] = [];
  for (let tick = 0; tick < ticks; tick++) {
    const wait = startAt + tick * tickMs - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sentAt = performance.now();
    inFlight.push(options.send(perTick, sentAt).then(() => answerMs.push(performance.now() - sentAt)));
  }
  await Promise.all(inFlight);
  return { startAt, items: ticks * perTick, answerMs };
}

/** Polls `done` every 20 ms until it holds or `timeoutMs` passed; returns whether it holds. */
export async function waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
