/**
 * The leak check (leak-check.ts) fails the tests that leak and only those: fixture files under
 * test/fixtures/ that leak on purpose run in a `node --test` of their own, and their TAP report must
 * name each leak, on the test that leaked it or, past a fixture shared by a `describe`, on the file.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Outcome {
  passed: boolean;
  error: string | undefined;
}

interface FixtureRun {
  exitCode: number;
  outcome(name: string): Outcome;
}

/** A TAP report's verdict line for `name` (at any depth) and the `error:` of the block after it. */
function outcomeIn(tap: string, name: string): Outcome {
  const lines = tap.split('\n');
  const at = lines.findIndex((line) => /^\s*(?:not )?ok \d+ - (.*)$/.exec(line)?.[1] === name);
  assert.notEqual(at, -1, `no result for "${name}" in:\n${tap}`);
  const block = lines.slice(
    at + 1,
    lines.findIndex((line, i) => i > at && line.trim() === '...'),
  );
  const error = block.map((line) => /^\s*error: '(.*)'$/.exec(line)?.[1]).find((e) => e !== undefined);
  return { passed: !lines[at]?.trim().startsWith('not ok'), error: error?.replaceAll("''", "'") };
}

async function runFixture(file: string): Promise<FixtureRun> {
  const env = { ...process.env };
  // Set in this file's own process by the runner; left in, it would make the nested runner report
  // in its child protocol instead of TAP.
  delete env.NODE_TEST_CONTEXT;
  const args = [
    '--test',
    '--test-force-exit',
    '--test-reporter=tap',
    '--import',
    './test/helpers/leak-check.ts',
  ];
  const run = promisify(execFile)(process.execPath, [...args, file], { cwd: ROOT, env, timeout: 180_000 });
  const { exitCode, tap } = await run.then(
    ({ stdout }) => ({ exitCode: 0, tap: stdout }),
    (error: { code: number; stdout: string }) => ({ exitCode: error.code, tap: error.stdout }),
  );
  return { exitCode, outcome: (name) => outcomeIn(tap, name) };
}

describe('leak check', { timeout: 240_000 }, () => {
  let perTest: FixtureRun;
  let shared: FixtureRun;
  before(async () => {
    [perTest, shared] = await Promise.all([
      runFixture('test/fixtures/leaking-tests.ts'),
      runFixture('test/fixtures/leak-past-shared-server.ts'),
    ]);
  });

  test('passes a test that closes everything it opened', () => {
    assert.deepEqual(perTest.outcome('closes everything it opens'), { passed: true, error: undefined });
  });

  test('fails a test that leaves a timer running, naming the timer', () => {
    const { passed, error } = perTest.outcome('leaves a timer running');
    assert.equal(passed, false);
    assert.equal(error, 'test "leaves a timer running" leaked: 1 × Timeout');
  });

  test('fails a test that leaves a test app open, naming where it was started', () => {
    const { passed, error } = perTest.outcome('leaves a test app open');
    assert.equal(passed, false);
    assert.match(
      error ?? '',
      /^test "leaves a test app open" leaked: test app \(test\/fixtures\/leaking-tests\.ts:\d+:\d+\) not closed$/,
    );
  });

  test('fails a test that leaves a worker thread running, naming where it was started', () => {
    const { passed, error } = perTest.outcome('leaves a worker thread running');
    assert.equal(passed, false);
    assert.match(error ?? '', /leaked: worker thread \(test\/fixtures\/leaking-tests\.ts:\d+:\d+\) running$/);
  });

  test('fails the file when a leak hides behind a fixture its tests share, naming the test', () => {
    assert.equal(shared.outcome('leaves an interval running').passed, true);
    const end = shared.outcome(`${ROOT}test/helpers/leak-check.ts`);
    assert.equal(end.passed, false);
    assert.equal(
      end.error,
      'test/fixtures/leak-past-shared-server.ts left running after all its tests and hooks: 1 × Timeout' +
        ' (the first Timeout appeared during "with a server shared by its tests > leaves an interval running")',
    );
  });

  test('makes the run fail', () => {
    assert.equal(perTest.exitCode, 1);
    assert.equal(shared.exitCode, 1);
  });
});
