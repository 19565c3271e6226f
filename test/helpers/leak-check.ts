/**
 * Fails a test that leaves something running: a timer, a socket or server, a database connection,
 * a worker thread, a child process, or a test app or SMTP sink it did not close. `npm test` loads
 * this module into every test file's process (`--import`); test/helpers/app.ts imports it too, so
 * a file run alone with `node --test` is checked as well. Leaks matter twice here: a later test
 * runs beside them, and a referenced timer or handle keeps the file's process from ever exiting.
 *
 * After each test, what it opened must be closed again: compared with the count taken before it
 * (resource-census.ts), no test app or SMTP sink it opened may still be open, and no worker thread
 * or child process it started may still run. Its timers and handles are held to the same rule
 * when the test stands alone: at the top level of its file, started with nothing open. Any other
 * test may share something opened before it (an app, a server, a connection pool a `describe`
 * opened in `before`) whose sockets and timers grow while the test uses it; those are checked once
 * the whole file is done, against the count taken when the file was loaded, naming the test during
 * which the first of a leaked kind appeared.
 *
 * A found leak is thrown from the hook, which fails the test with a message naming what leaked
 * and where it was opened. The npm script also passes `--test-force-exit`, so a file whose leak
 * was reported still ends instead of waiting for the leaked interval forever.
 */
import { AsyncResource } from 'node:async_hooks';
import { after, afterEach, beforeEach, type SuiteContext, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread } from 'node:worker_threads';
import {
  type Census,
  hasMoreThan,
  moreResources,
  newSince,
  takeCensus,
  watchWorkersAndChildren,
} from './resource-census.ts';

/**
 * Closing is asynchronous (a socket's handle goes away a turn after `end()`, a worker some
 * milliseconds after `terminate()`), so a leak is only a leak once it outlasts this much waiting.
 */
const SETTLE_MS = 2000;

async function settled(findLeaks: () => string[]): Promise<string[]> {
  const deadline = Date.now() + SETTLE_MS;
  for (let wait = 1; ; wait = Math.min(wait * 2, 100)) {
    const leaks = findLeaks();
    if (leaks.length === 0 || Date.now() >= deadline) return leaks;
    await sleep(wait);
  }
}

function testFile(): string {
  return (process.argv[1] ?? 'this file').replace(`${process.cwd()}/`, '');
}

function register(): void {
  watchWorkersAndChildren();
  const atLoad = takeCensus();
  const atStart = new WeakMap<TestContext | SuiteContext, Census>();
  // A hook's parent is found from the async context it is registered in; this scope belongs to no
  // test, so the file-end hook lands on the root although it is registered from within the first
  // test's hook, i.e. after the file's own top-level `after` hooks, which then run before it.
  const rootScope = new AsyncResource('leak-check');
  let fileEndRegistered = false;

  beforeEach((t) => {
    if (!fileEndRegistered) {
      fileEndRegistered = true;
      rootScope.runInAsyncScope(() => after(checkFileEnd));
    }
    atStart.set(t, takeCensus());
  });

  // For timers and handles left by a test that shares its surroundings, the first such test: named
  // at the file's end if one of that type is still running then.
  const firstSeenAfter = new Map<string, string>();

  afterEach(async (t) => {
    const before = atStart.get(t);
    if (before === undefined) return;
    // A test of its own: at the top level (no describe or parent test whose `before` may have
    // opened a pool that connects lazily, during this test) and started with nothing open.
    const alone = t.fullName === t.name && !hasMoreThan(before, atLoad);
    const leaks = await settled(() => newSince(before, takeCensus(), alone));
    if (leaks.length > 0) throw new Error(`test "${t.fullName}" leaked: ${leaks.join('; ')}`);
    if (alone) return;
    await sleep(1);
    for (const type of moreResources(before, takeCensus()).keys()) {
      if (!firstSeenAfter.has(type)) firstSeenAfter.set(type, t.fullName);
    }
  });

  async function checkFileEnd(): Promise<void> {
    const leaks = await settled(() => newSince(atLoad, takeCensus()));
    if (leaks.length === 0) return;
    const suspects = [...moreResources(atLoad, takeCensus()).keys()]
      .filter((type) => firstSeenAfter.has(type))
      .map((type) => `the first ${type} appeared during "${firstSeenAfter.get(type)}"`);
    const hint = suspects.length > 0 ? ` (${suspects.join('; ')})` : '';
    throw new Error(`${testFile()} left running after all its tests and hooks: ${leaks.join('; ')}${hint}`);
  }
}

// Only in a test file's main thread under the test runner (NODE_TEST_CONTEXT is set in the file's
// process): not in worker threads, which inherit `--import`, nor in a benchmark that imports the
// test helpers.
if (isMainThread && process.env.NODE_TEST_CONTEXT !== undefined) register();
