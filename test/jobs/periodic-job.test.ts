/**
 * The background job runner: runs periodically, never overlaps, survives failures, stops cleanly.
 * Time is moved by hand (manual timers) and each run ends when the test says: nothing sleeps.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { JobTimers } from '../../src/jobs/job-timers.ts';
import { startPeriodicJob } from '../../src/jobs/periodic-job.ts';

/** Timers that fire only when `advance` moves their time past them. */
class ManualTimers implements JobTimers {
  private nowMs = 0;
  private nextId = 1;
  private readonly pending = new Map<number, { at: number; callback: () => void }>();

  setTimeout(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.pending.set(id, { at: this.nowMs + delayMs, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  get count(): number {
    return this.pending.size;
  }

  /** Moves time forward, firing (in time order) every timer that comes due. */
  advance(ms: number): void {
    const until = this.nowMs + ms;
    for (;;) {
      const next = [...this.pending].sort((a, b) => a[1].at - b[1].at)[0];
      if (!next || next[1].at > until) break;
      this.pending.delete(next[0]);
      this.nowMs = next[1].at;
      next[1].callback();
    }
    this.nowMs = until;
  }
}

/** A run that ends when the test calls `finish` (or `fail`). */
class ControlledRuns {
  started = 0;
  active = 0;
  maxActive = 0;
  private endRun: ((error?: Error) => void) | undefined;

  readonly run = (): Promise<number> => {
    this.started++;
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    const n = this.started;
    return new Promise<number>((resolve, reject) => {
      this.endRun = (error) => {
        this.active--;
        if (error) reject(error);
        else resolve(n);
      };
    });
  };

  finish(): void {
    const end = this.endRun;
    this.endRun = undefined;
    assert.ok(end, 'a run is in progress');
    end();
  }

  fail(error: Error): void {
    const end = this.endRun;
    this.endRun = undefined;
    assert.ok(end, 'a run is in progress');
    end(error);
  }
}

/**
 * Lets everything already settled run: a run's end reaches the job (logging, scheduling the next
 * run) through promise callbacks only, all of which run before the next turn of the event loop.
 */
function settled(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function capturingLogger() {
  const lines: Array<{ level: string; obj: Record<string, unknown> }> = [];
  return {
    lines,
    logger: {
      info: (obj: Record<string, unknown>) => lines.push({ level: 'info', obj }),
      error: (obj: Record<string, unknown>) => lines.push({ level: 'error', obj }),
    } as never,
  };
}

describe('periodic job', { timeout: 10_000 }, () => {
  test('first run after firstRunAfterMs, then every interval after the previous run ends', async () => {
    const timers = new ManualTimers();
    const runs = new ControlledRuns();
    const { lines, logger } = capturingLogger();
    const job = startPeriodicJob({
      name: 'test',
      intervalMs: 1000,
      firstRunAfterMs: 100,
      logger,
      timers,
      run: runs.run,
    });
    timers.advance(99);
    assert.equal(runs.started, 0, 'not before firstRunAfterMs');
    timers.advance(1);
    assert.equal(runs.started, 1);

    // A run that outlasts many intervals: no second run starts beside it.
    timers.advance(10_000);
    assert.equal(timers.count, 0, 'nothing scheduled while a run is in progress');
    assert.equal(runs.started, 1);

    runs.finish();
    await settled();
    assert.deepEqual(lines.at(-1), { level: 'info', obj: { job: 'test', result: 1 } });
    assert.equal(timers.count, 1, 'the next run is scheduled once this one ended');
    timers.advance(999);
    assert.equal(runs.started, 1, 'the interval counts from the end of the previous run');
    timers.advance(1);
    assert.equal(runs.started, 2);
    assert.equal(runs.maxActive, 1, 'runs never overlap');

    runs.finish();
    await job.stop();
  });

  test('a failing run is logged and the job carries on', async () => {
    const timers = new ManualTimers();
    const runs = new ControlledRuns();
    const { lines, logger } = capturingLogger();
    const job = startPeriodicJob({ name: 'flaky', intervalMs: 50, logger, timers, run: runs.run });
    timers.advance(50);
    const boom = new Error('boom');
    runs.fail(boom);
    await settled();
    assert.deepEqual(lines, [{ level: 'error', obj: { job: 'flaky', err: boom } }]);
    timers.advance(50);
    assert.equal(runs.started, 2, 'ran again after the failure');
    runs.finish();
    await settled();
    assert.deepEqual(lines.at(-1), { level: 'info', obj: { job: 'flaky', result: 2 } });
    await job.stop();
  });

  test('stop() waits for the run in progress and nothing runs after it', async () => {
    const timers = new ManualTimers();
    const runs = new ControlledRuns();
    const job = startPeriodicJob({
      name: 'stopping',
      intervalMs: 10,
      logger: capturingLogger().logger,
      timers,
      run: runs.run,
    });
    timers.advance(10);
    assert.equal(runs.active, 1);
    let stopped = false;
    const stopping = job.stop().then(() => {
      stopped = true;
    });
    await settled();
    assert.equal(stopped, false, 'stop() returned while a run was in progress');
    runs.finish();
    await stopping;
    assert.equal(runs.active, 0);
    assert.equal(timers.count, 0, 'no run scheduled after stop()');
    timers.advance(1_000_000);
    assert.equal(runs.started, 1);
  });

  test('stop() before the first run: it never runs', async () => {
    const timers = new ManualTimers();
    const runs = new ControlledRuns();
    const job = startPeriodicJob({
      name: 'never',
      intervalMs: 1000,
      logger: capturingLogger().logger,
      timers,
      run: runs.run,
    });
    assert.equal(timers.count, 1, 'the first run is scheduled');
    await job.stop();
    assert.equal(timers.count, 0, 'its timer was cancelled');
    timers.advance(1_000_000);
    assert.equal(runs.started, 0);
  });
});
