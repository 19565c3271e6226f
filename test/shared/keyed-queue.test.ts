import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyedQueue } from '../../src/shared/keyed-queue.ts';

/** A task that runs until released, recording when it starts. */
function gate(
  log: string[],
  name: string,
): { task: () => Promise<string>; release: () => void; fail: () => void } {
  let release: () => void = () => {};
  let fail: () => void = () => {};
  const task = () =>
    new Promise<string>((resolve, reject) => {
      log.push(`start ${name}`);
      release = () => resolve(name);
      fail = () => reject(new Error(`${name} failed`));
    });
  return { task, release: () => release(), fail: () => fail() };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('KeyedQueue', () => {
  it('runs the tasks of one key one at a time, in arrival order; other keys side by side', async () => {
    const queue = new KeyedQueue<string>();
    const log: string[] = [];
    const a1 = gate(log, 'a1');
    const a2 = gate(log, 'a2');
    const b1 = gate(log, 'b1');
    const results = [queue.run('a', a1.task), queue.run('a', a2.task), queue.run('b', b1.task)];
    await turn();
    assert.deepEqual(log, ['start a1', 'start b1'], 'a2 waits for a1; b1 does not');
    a1.release();
    await turn();
    assert.deepEqual(log, ['start a1', 'start b1', 'start a2']);
    a2.release();
    b1.release();
    assert.deepEqual(await Promise.all(results), ['a1', 'a2', 'b1']);
    await turn();
    assert.equal(queue.size, 0, 'idle keys are dropped');
  });

  it('a failed task reaches its caller only, and the next task of the key still runs', async () => {
    const queue = new KeyedQueue<string>();
    const log: string[] = [];
    const first = gate(log, 'first');
    const second = gate(log, 'second');
    const failed = queue.run('k', first.task);
    const next = queue.run('k', second.task);
    await turn();
    first.fail();
    await assert.rejects(failed, /first failed/);
    await turn();
    assert.deepEqual(log, ['start first', 'start second']);
    second.release();
    assert.equal(await next, 'second');
  });
});
