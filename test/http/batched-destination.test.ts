/** The process logger's batched destination (ADR 012): fewer writes, same lines, nothing lost at exit. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { BatchedDestination } from '../../src/logger.ts';

const LOGGER_URL = new URL('../../src/logger.ts', import.meta.url).href;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('batched log destination', () => {
  test('lines are written in order, in writes of about 4 KiB, and flush() writes the rest', () => {
    const writes: string[] = [];
    const destination = new BatchedDestination({ write: (data: string) => writes.push(data) });
    const logger = pino({ level: 'info' }, destination);
    for (let i = 0; i < 100; i++) logger.info({ i, route: '/healthz', status: 200 }, 'request completed');
    const lines = writes.join('').split('\n').filter(Boolean);
    assert.ok(writes.length > 0 && writes.length < 100 / 5, `${writes.length} writes for 100 lines`);
    for (const chunk of writes) assert.ok(chunk.length >= 4096 && chunk.endsWith('\n'));
    logger.flush();
    const all = writes.join('').split('\n').filter(Boolean);
    assert.ok(all.length === 100 && lines.length < 100);
    assert.deepEqual(
      all.map((line) => JSON.parse(line).i),
      Array.from({ length: 100 }, (_, i) => i),
    );
  });

  for (const ending of ['process.exit(3)', 'throw new Error("crash")']) {
    test(`pending lines reach stdout when the process ends with ${ending}`, () => {
      const script = `import { createLogger } from ${JSON.stringify(LOGGER_URL)};
        const log = createLogger('info');
        for (let i = 0; i < 5; i++) log.info({ i }, 'pending');
        ${ending};`;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      assert.notEqual(child.status, 0);
      const lines = child.stdout.split('\n').filter(Boolean);
      assert.deepEqual(
        lines.map((line) => JSON.parse(line).i),
        [0, 1, 2, 3, 4],
      );
    });
  }
});
