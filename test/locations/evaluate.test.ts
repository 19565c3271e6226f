/** The evaluation rule on its own (contract §4.3), without storage: a fake index of fixed answers. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ContainmentIndex, type DeviceCursor, evaluateLocation } from '../../src/locations/evaluate.ts';

/** An index answering the ids listed for each lng; `known` is what `has` reports. */
function fakeIndex(answers: Record<number, string[]>, known: string[]): ContainmentIndex {
  return { query: (lng) => [...(answers[lng] ?? [])], has: (id) => known.includes(id) };
}

const t0 = new Date('2026-01-01T00:00:00Z');
const later = (s: number) => new Date(t0.getTime() + s * 1000);

describe('evaluateLocation', () => {
  test('enter, exit, exits before enters, ids sorted', () => {
    const index = fakeIndex({ 1: ['b', 'a'], 2: ['c'] }, ['a', 'b', 'c']);
    let cursor: DeviceCursor = { insideIds: [], lastEvaluatedAt: null };
    const first = evaluateLocation(cursor, index, 1, 0, t0);
    assert.ok(!first.outOfOrder);
    assert.deepEqual(first.transitions, [
      { type: 'enter', geofenceId: 'a' },
      { type: 'enter', geofenceId: 'b' },
    ]);
    cursor = first.cursor;
    assert.deepEqual(cursor, { insideIds: ['a', 'b'], lastEvaluatedAt: t0 });
    const second = evaluateLocation(cursor, index, 2, 0, later(1));
    assert.ok(!second.outOfOrder);
    assert.deepEqual(second.transitions, [
      { type: 'exit', geofenceId: 'a' },
      { type: 'exit', geofenceId: 'b' },
      { type: 'enter', geofenceId: 'c' },
    ]);
  });

  test('a geofence gone from the index is dropped silently', () => {
    const index = fakeIndex({ 1: [] }, ['b']);
    const result = evaluateLocation({ insideIds: ['a', 'b'], lastEvaluatedAt: t0 }, index, 1, 0, later(1));
    assert.ok(!result.outOfOrder);
    assert.deepEqual(result.transitions, [{ type: 'exit', geofenceId: 'b' }]);
    assert.deepEqual(result.cursor.insideIds, []);
  });

  test('older than the newest evaluated location: out of order; the same instant is in order', () => {
    const index = fakeIndex({ 1: ['a'] }, ['a']);
    const cursor: DeviceCursor = { insideIds: [], lastEvaluatedAt: later(10) };
    assert.deepEqual(evaluateLocation(cursor, index, 1, 0, later(9)), { outOfOrder: true });
    const same = evaluateLocation(cursor, index, 1, 0, later(10));
    assert.equal(same.outOfOrder, false);
  });
});
