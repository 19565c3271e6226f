/**
 * The text-rule walker and the free-object depth check on their own: exact locations, keys
 * included, and no recursion — a value nested 200,000 levels deep is answered, not a RangeError.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_FREE_OBJECT_DEPTH, tooDeepPath } from '../../src/http/free-object.ts';
import { MAX_REQUEST_DEPTH, MAX_TEXT_ISSUES, textIssues, textProblem } from '../../src/http/text-rules.ts';

function nestedArrays(levels: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

describe('text rules', () => {
  test('well-formed text passes; NUL and each kind of lone surrogate do not', () => {
    for (const ok of ['', 'plain', 'line\nbreak', '\u2028\u2029', '😀 pair \ud83d\ude00', '\ufffd']) {
      assert.equal(textProblem(ok), undefined, JSON.stringify(ok));
    }
    for (const bad of ['\u0000', 'a\u0000', '\ud800', 'x\udfff', '\ude00\ud83d', 'end\ud83d']) {
      assert.notEqual(textProblem(bad), undefined, JSON.stringify(bad));
    }
  });

  test('issues name the exact place: array indexes as integers, keys as sent', () => {
    const value = {
      fine: ['a', 1, null, true, { b: 'c' }],
      'bad\u0000key': 'ok',
      list: [0, 'x\ud800', { deep: [Number.POSITIVE_INFINITY] }],
      '0': Number.NaN,
    };
    const issues = textIssues(value, ['body', 'locations', 4]);
    const byLoc = issues.map((i) => JSON.stringify(i.loc)).sort();
    assert.deepEqual(
      byLoc,
      [
        ['body', 'locations', 4, '0'],
        ['body', 'locations', 4, 'bad\u0000key'],
        ['body', 'locations', 4, 'list', 1],
        ['body', 'locations', 4, 'list', 2, 'deep', 0],
      ]
        .map((l) => JSON.stringify(l))
        .sort(),
    );
    assert.ok(issues.every((i) => i.type === 'value_error'));
    assert.deepEqual(textIssues('\u0000', ['query', 'q']), [
      { type: 'value_error', loc: ['query', 'q'], msg: 'Text may not contain NUL (U+0000)' },
    ]);
    assert.deepEqual(textIssues({ a: [{ b: 'fine' }] }, ['body']), []);
  });

  test('nesting: the limit is reported where it is passed, however deep the value goes', () => {
    assert.deepEqual(textIssues(nestedArrays(MAX_REQUEST_DEPTH - 1), ['body']), []);
    for (const levels of [MAX_REQUEST_DEPTH + 1, 200_000]) {
      const issues = textIssues(nestedArrays(levels), ['body']);
      assert.equal(issues.length, 1);
      assert.deepEqual(issues[0]?.loc, ['body', ...Array<number>(MAX_REQUEST_DEPTH).fill(0)]);
    }
  });

  test('a value full of problems yields a bounded list', () => {
    const issues = textIssues(Array<string>(10_000).fill('\u0000'), ['body']);
    assert.equal(issues.length, MAX_TEXT_ISSUES);
  });

  test('free-object depth: the first container past the limit, breadth first, without recursion', () => {
    assert.equal(tooDeepPath({ a: { b: 1 } }, 2), undefined);
    assert.deepEqual(tooDeepPath({ a: { b: { c: 1 } }, z: [[1]] }, 2), ['a', 'b']);
    assert.deepEqual(tooDeepPath({ a: [[]] }, 2), ['a', 0]);
    assert.equal(tooDeepPath(nestedArrays(MAX_FREE_OBJECT_DEPTH), MAX_FREE_OBJECT_DEPTH), undefined);
    assert.deepEqual(
      tooDeepPath(nestedArrays(200_000), MAX_FREE_OBJECT_DEPTH),
      Array<number>(MAX_FREE_OBJECT_DEPTH).fill(0),
    );
  });
});
