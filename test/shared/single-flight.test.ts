import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SingleFlight } from '../../src/shared/single-flight.ts';

describe('SingleFlight', () => {
  it('callers arriving during a load share it; the next call after it loads again', async () => {
    const flight = new SingleFlight<string, number>();
    let loads = 0;
    let release: (n: number) => void = () => {};
    const load = () =>
      new Promise<number>((resolve) => {
        loads += 1;
        release = resolve;
      });
    const concurrent = Array.from({ length: 64 }, () => flight.run('k', load));
    assert.equal(loads, 1);
    release(7);
    assert.deepEqual(new Set(await Promise.all(concurrent)), new Set([7]));
    const again = flight.run('k', load);
    assert.equal(loads, 2);
    release(8);
    assert.equal(await again, 8);
  });

  it('keys are independent, a failure reaches every waiter and is not kept', async () => {
    const flight = new SingleFlight<string, number>();
    let calls = 0;
    const failing = async () => {
      calls += 1;
      throw new Error('db down');
    };
    const results = await Promise.allSettled([flight.run('a', failing), flight.run('a', failing)]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    assert.equal(calls, 1);
    assert.equal(await flight.run('a', async () => 1), 1, 'a failed load is not cached');
    assert.equal(await flight.run('b', async () => 2), 2);
  });

  it('forget: callers after an invalidation do not join a load that began before it', async () => {
    const flight = new SingleFlight<string, string>();
    let releaseOld: (v: string) => void = () => {};
    const old = flight.run('k', () => new Promise((resolve) => (releaseOld = resolve)));
    flight.forget('k');
    const fresh = flight.run('k', async () => 'new');
    releaseOld('old');
    assert.equal(await old, 'old');
    assert.equal(await fresh, 'new');
    // The old load finishing must not remove the fresh one's entry (already done here) or break later runs.
    assert.equal(await flight.run('k', async () => 'later'), 'later');
  });
});
