import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDuration, parseDurationList } from '../../src/shared/duration.ts';
import { uuidv7 } from '../../src/shared/ids.ts';

test('uuidv7: RFC 9562 layout, unique and monotonic within a process', () => {
  let previous = '';
  const seen = new Set<string>();
  for (let i = 0; i < 20_000; i++) {
    const id = uuidv7();
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(id > previous, `${id} sorts after ${previous}`);
    previous = id;
    seen.add(id);
  }
  assert.equal(seen.size, 20_000);
});

test('uuidv7 carries the millisecond timestamp', () => {
  const ms = Date.UTC(2030, 0, 1);
  const id = uuidv7(ms).replace(/-/g, '');
  assert.equal(Number.parseInt(id.slice(0, 12), 16), ms);
});

test('durations', () => {
  assert.equal(parseDuration('15m'), 900_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('0s'), undefined);
  assert.equal(parseDuration('1 hour'), undefined);
  assert.deepEqual(parseDurationList('1s,1s,2m'), [1000, 1000, 120_000]);
  assert.equal(parseDurationList('1s,,2m'), undefined);
});
