/** The contract's 422 body (§1): reading its `detail` array and finding one issue in it. */
import assert from 'node:assert/strict';
import { type call, expectError } from './identity.ts';

export interface Issue {
  type: string;
  loc: Array<string | number>;
  msg: string;
}

/** The `detail` issues of a 422 VALIDATION_ERROR answer (fails the test for any other answer). */
export function issuesOf(res: Awaited<ReturnType<typeof call>>, what: string): Issue[] {
  const body = expectError(res, 422, 'VALIDATION_ERROR', what);
  assert.ok(Array.isArray(body.detail), `${what}: detail array in ${res.body}`);
  return body.detail as Issue[];
}

/** Asserts one issue with that type and loc is present. */
export function assertIssue(issues: Issue[], type: string, loc: Array<string | number>, what: string): Issue {
  const found = issues.find((i) => i.type === type && JSON.stringify(i.loc) === JSON.stringify(loc));
  assert.ok(found, `${what}: expected ${type} at ${JSON.stringify(loc)} in ${JSON.stringify(issues)}`);
  return found;
}
