/** The background job runner: runs periodically, never overlaps, survives failures, stops cleanly. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPeriodicJob } from '../../src/jobs/periodic-job.ts';

function silentLogger() {
  const lines: Array<{ level: string; obj: unknown }> = [];
  return {
    lines,
    logger: {
      info: (obj: unknown) => lines.push({ level: 'info', obj }),
      error: (obj: unknown) => lines.push({ level: 'error', obj }),
    } as never,
  };
}

describe('periodic job', () => {
  test('runs repeatedly, one run at a time, logging failures and carrying on', async () => {
    let runs = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    const { lines, logger } = silentLogger();
    const job = startPeriodicJob({
      name: 'test',
      intervalMs: 5,
      firstRunAfterMs: 0,
      logger,
      run: async () => {
        runs++;
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await sleep(10);
        concurrent--;
        if (runs === 2) throw new Error('boom');
        return runs;
      },
    });
    await sleep(120);
    await job.stop();
    const stoppedAt = runs;
    await sleep(40);
    assert.ok(runs >= 3, `ran ${runs} times`);
    assert.equal(maxConcurrent, 1, 'runs never overlap');
    assert.equal(runs, stoppedAt, 'no run after stop()');
    assert.equal(concurrent, 0, 'stop() waited for the run in progress');
    assert.ok(
      lines.some((l) => l.level === 'error'),
      'the failure was logged',
    );
  });

  test('stop() before the first run: it never runs', async () => {
    let runs = 0;
    const job = startPeriodicJob({
      name: 'never',
      intervalMs: 1000,
      logger: silentLogger().logger,
      run: async () => {
        runs++;
      },
    });
    await job.stop();
    await sleep(20);
    assert.equal(runs, 0);
  });
});
