/**
 * Contract §1, text rules, checked on a parsed request value (a JSON body, a query, path params)
 * before schema validation: every string and every object key is valid Unicode without NUL (no
 * U+0000, no lone surrogate), every number is finite, and nothing nests deeper than
 * `MAX_REQUEST_DEPTH`. PostgreSQL cannot store NUL in text or jsonb nor a lone surrogate in jsonb,
 * and its driver would turn a lone surrogate of a text column into U+FFFD (two different external
 * ids becoming one); SQLite stores them all. Refusing them here, before any database sees them, makes
 * both databases answer alike (ADR 003).
 *
 * The walk is iterative (an explicit stack): a body of 10,000 nested arrays must be answered 422,
 * not overflow the call stack. Locations are built only for values that break a rule.
 */
import type { ValidationIssue } from './validation-errors.ts';

/**
 * How deep any request value may nest, counting the root as level 1. Free-form objects have their
 * own, tighter limit (16 levels, `free-object.ts`); this one bounds everything else (and values the
 * schema has not reached yet, such as batch items) well above any valid request, so no deeply
 * nested value reaches code that recurses, JSON.stringify included.
 */
export const MAX_REQUEST_DEPTH = 64;

/** More issues than this in one value add nothing for the client and only grow the answer. */
export const MAX_TEXT_ISSUES = 50;

type Loc = Array<string | number>;

interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  key: string | number | undefined;
}

/** Why `text` breaks the text rule, or undefined when it keeps it. */
export function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'NUL (U+0000)';
  if (!text.isWellFormed()) return 'a lone surrogate (invalid Unicode)';
  return undefined;
}

function locOf(root: Loc, frame: Frame | undefined, last?: string | number): Loc {
  const keys: Array<string | number> = last === undefined ? [] : [last];
  for (let f = frame; f !== undefined && f.key !== undefined; f = f.parent) keys.push(f.key);
  return [...root, ...keys.reverse()];
}

/**
 * The rule-breaking strings, keys, numbers and nesting inside `value`, with `loc` starting at
 * `root` (e.g. `['body']`, `['query']`, `['body', 'locations', 3]`). Empty when all is well.
 */
export function textIssues(value: unknown, root: Loc, maxDepth = MAX_REQUEST_DEPTH): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const scalar = (v: unknown, frame: Frame | undefined, key: string | number | undefined): void => {
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem !== undefined) {
        issues.push({
          type: 'value_error',
          loc: locOf(root, frame, key),
          msg: `Text may not contain ${problem}`,
        });
      }
    } else if (typeof v === 'number' && !Number.isFinite(v)) {
      issues.push({
        type: 'value_error',
        loc: locOf(root, frame, key),
        msg: 'Input should be a finite number',
      });
    }
  };
  if (value === null || typeof value !== 'object') {
    scalar(value, undefined, undefined);
    return issues;
  }
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: undefined }];
  while (stack.length > 0 && issues.length < MAX_TEXT_ISSUES) {
    const frame = stack.pop() as Frame;
    if (frame.depth > maxDepth) {
      issues.push({
        type: 'value_error',
        loc: locOf(root, frame),
        msg: `Input nests more than ${maxDepth} levels deep`,
      });
      continue;
    }
    const visit = (child: unknown, key: string | number): void => {
      if (child !== null && typeof child === 'object') {
        stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
      } else {
        scalar(child, frame, key);
      }
    };
    if (Array.isArray(frame.value)) {
      const list = frame.value as unknown[];
      for (let i = 0; i < list.length; i++) visit(list[i], i);
    } else {
      for (const key of Object.keys(frame.value)) {
        const problem = textProblem(key);
        if (problem !== undefined) {
          issues.push({
            type: 'value_error',
            loc: locOf(root, frame, key),
            msg: `Object keys may not contain ${problem}`,
          });
        }
        visit((frame.value as Record<string, unknown>)[key], key);
      }
    }
  }
  return issues.slice(0, MAX_TEXT_ISSUES);
}
