/**
 * The one job loop (src/jobs/job-worker.ts) with a kind whose jobs are plain objects: what the loop
 * itself promises, whatever table a kind keeps — serial keys keep claim order, other jobs run side
 * by side, outcomes are recorded in groups, an outcome the database could not take is kept and
 * recorded when it answers, and `stop()` gives back jobs not started while those in flight finish.
 * The kinds over real tables (deliveries, workflow actions) are tested in test/webhooks and
 * test/workflows, including crashes and two workers on one database.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ClaimedJob, type JobKind, JobWorker } from '../../src/jobs/job-worker.ts';
import { afterAttempt } from '../../src/jobs/retry-schedule.ts';
import { WakeSignal } from '../../src/jobs/wake-signal.ts';
import { ManualClock } from '../../src/shared/clock.ts';

interface Job extends ClaimedJob {
  key: string;
}

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

/** A kind over an in-memory queue; `gate` holds every execution until opened. */
class MemoryKind implements JobKind<Job, string> {
  readonly name = 'memory job';
  queue: Job[] = [];
  readonly log: string[] = [];
  readonly recorded: string[][] = [];
  readonly released: string[] = [];
  running = 0;
  maxRunning = 0;
  failRecordsWith: Error | undefined;
  private open: (() => void) | undefined;
  private gate: Promise<void> | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => {
      this.open = resolve;
    });
  }

  release(_workerId: string, ids: readonly string[]): Promise<void> {
    this.released.push(...ids);
    return Promise.resolve();
  }

  openGate(): void {
    this.open?.();
    this.gate = undefined;
  }

  async claim(_workerId: string, limit: number): Promise<Job[]> {
    return this.queue.splice(0, limit);
  }

  serialKey(job: Job): string {
    return job.key;
  }

  async execute(job: Job): Promise<string> {
    this.running += 1;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    this.log.push(`start ${job.id}`);
    if (this.gate) await this.gate;
    await new Promise((r) => setImmediate(r));
    this.running -= 1;
    if (job.id.startsWith('boom')) throw new Error('the attempt could not be made');
    return `done ${job.id}`;
  }

  failure(job: Job): string {
    return `failed ${job.id}`;
  }

  async record(_workerId: string, results: readonly string[]): Promise<void> {
    if (this.failRecordsWith) throw this.failRecordsWith;
    this.recorded.push([...results]);
  }
}

function workerOf(kind: MemoryKind, maxInFlight = 50): JobWorker<Job, string> {
  return new JobWorker(kind, {
    clock: new ManualClock('2026-03-10T12:00:00.000Z'),
    logger: quiet,
    batchSize: 10,
    maxInFlight,
  });
}

const jobs = (key: string, ...ids: string[]): Job[] => ids.map((id) => ({ id, key }));

describe('the job loop', () => {
  test('jobs of one key run one after another in claim order; other keys run side by side', async () => {
    const kind = new MemoryKind();
    kind.queue = [...jobs('a', 'a1', 'a2', 'a3'), ...jobs('b', 'b1', 'b2')];
    const worker = workerOf(kind);
    assert.equal(await worker.runOnce(), 5);
    const order = kind.log.filter((l) => l.includes(' a')).map((l) => l.slice(6));
    assert.deepEqual(order, ['a1', 'a2', 'a3']);
    assert.equal(kind.maxRunning, 2, 'one job per key at a time, the two keys at once');
    assert.deepEqual(kind.recorded.flat().sort(), ['done a1', 'done a2', 'done a3', 'done b1', 'done b2']);
  });

  test('a throwing attempt is recorded as the kind’s failure, not lost', async () => {
    const kind = new MemoryKind();
    kind.queue = jobs('x', 'boom1', 'ok1');
    await workerOf(kind).runOnce();
    assert.deepEqual(kind.recorded.flat(), ['failed boom1', 'done ok1']);
  });

  test('outcomes the database cannot take are kept and recorded once it answers', async () => {
    const kind = new MemoryKind();
    kind.queue = jobs('k', 'j1');
    kind.failRecordsWith = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    const worker = workerOf(kind);
    const round = worker.runOnce();
    // The first try fails; the loop waits and tries again with the same outcome.
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(kind.recorded, []);
    kind.failRecordsWith = undefined;
    await round;
    assert.deepEqual(kind.recorded, [['done j1']]);
  });

  test('stop() gives back claimed jobs not started at once and lets those in flight finish', async () => {
    const kind = new MemoryKind();
    kind.hold();
    kind.queue = jobs('one', 'p1', 'p2', 'p3');
    const worker = workerOf(kind);
    const signal = new WakeSignal();
    worker.start(signal, 10_000);
    while (kind.running === 0) await new Promise((r) => setImmediate(r));
    assert.equal(worker.waitingCount, 2, 'p2 and p3 wait behind p1');
    const stopping = worker.stop();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(kind.released.sort(), ['p2', 'p3'], 'given back before p1 ends');
    kind.openGate();
    await stopping;
    assert.deepEqual(kind.recorded.flat(), ['done p1']);
    assert.deepEqual(kind.log, ['start p1'], 'nothing given back was started');
  });

  test('the loop claims while there is room and wakes on the signal', async () => {
    const kind = new MemoryKind();
    const worker = workerOf(kind, 4);
    const signal = new WakeSignal();
    worker.start(signal, 10_000);
    kind.queue = jobs('s', 's1', 's2');
    signal.notify();
    for (let i = 0; i < 100 && kind.recorded.flat().length < 2; i++)
      await new Promise((r) => setTimeout(r, 5));
    await worker.stop();
    assert.deepEqual(kind.recorded.flat(), ['done s1', 'done s2']);
  });
});

describe('the retry schedule', () => {
  const at = new Date('2026-03-10T12:00:00.000Z');
  const schedule = [1000, 5000];

  test('a failure before the last attempt is retried after its delay', () => {
    assert.deepEqual(afterAttempt(schedule, 1, at, { success: false }), {
      ended: false,
      retryAt: new Date(at.getTime() + 1000),
    });
    assert.deepEqual(afterAttempt(schedule, 2, at, { success: false }), {
      ended: false,
      retryAt: new Date(at.getTime() + 5000),
    });
  });

  test('success, the last attempt, and a final failure end the job', () => {
    assert.deepEqual(afterAttempt(schedule, 1, at, { success: true }), { ended: true });
    assert.deepEqual(afterAttempt(schedule, 3, at, { success: false }), { ended: true });
    assert.deepEqual(afterAttempt(schedule, 1, at, { success: false, final: true }), { ended: true });
  });
});
