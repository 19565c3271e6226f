/**
 * The test helpers' record of what they opened and not yet closed (test apps, SMTP sinks), so the
 * leak check (leak-check.ts) can name a fixture a test forgot to close, and where it was opened,
 * instead of only counting the sockets and timers it left behind.
 */

export interface OpenFixture {
  /** What it is and where the test opened it, e.g. "test app (test/devices/crud.test.ts:27:15)". */
  readonly description: string;
}

const open = new Set<OpenFixture>();

/**
 * Records a fixture as open; call the returned function once it is closed. `openedAt` defaults to
 * the test's line that called into the helpers (take it before the helper's first `await`).
 */
export function trackFixture(kind: string, openedAt: string = callerOutsideHelpers()): () => void {
  const fixture: OpenFixture = { description: `${kind} (${openedAt})` };
  open.add(fixture);
  return () => {
    open.delete(fixture);
  };
}

export function openFixtures(): ReadonlySet<OpenFixture> {
  return new Set(open);
}

/**
 * The first frame of the current stack in a test file rather than in node's internals, installed
 * packages or these helpers: the line a reader of the failure message should look at.
 */
export function callerOutsideHelpers(): string {
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = saved;
  const frames = stack
    .split('\n')
    .slice(1)
    .map((line) => /(?:\(|at )((?:file:\/\/)?\/[^()\s]+:\d+:\d+)\)?$/.exec(line.trim())?.[1])
    .filter((frame): frame is string => frame !== undefined && !frame.includes('/node_modules/'));
  const inTests = frames.find((frame) => !frame.includes('/test/helpers/'));
  const where = inTests ?? frames[0] ?? 'unknown place';
  return where.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
}
