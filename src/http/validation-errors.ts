/**
 * Maps ajv errors to the contract's 422 `detail` array (seed §7.1, contract §1):
 * `{type, loc, msg}` with `loc` starting at `body`/`query`/`path` and integer array indexes.
 */
import type { ErrorObject } from 'ajv';
import { MAX_DEPTH_KEYWORD } from './free-object.ts';

export interface ValidationIssue {
  type: string;
  loc: Array<string | number>;
  msg: string;
}

const CONTEXT_ROOT: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

const TYPE_ERRORS: Record<string, [string, string]> = {
  integer: ['int_parsing', 'Input should be a valid integer'],
  number: ['float_parsing', 'Input should be a valid number'],
  boolean: ['bool_parsing', 'Input should be a valid boolean'],
  string: ['string_type', 'Input should be a valid string'],
  array: ['list_type', 'Input should be a valid list'],
  object: ['dict_type', 'Input should be a valid object'],
  null: ['none_required', 'Input should be null'],
};

const ARRAY_INDEX = /^(0|[1-9]\d*)$/;

function pathSegments(instancePath: string): Array<string | number> {
  if (instancePath === '') return [];
  const segments: Array<string | number> = [];
  for (const raw of instancePath.slice(1).split('/')) {
    // JSON-pointer unescaping (RFC 6901) only when the segment has an escape at all.
    const segment = raw.includes('~') ? raw.replaceAll('~1', '/').replaceAll('~0', '~') : raw;
    segments.push(ARRAY_INDEX.test(segment) ? Number(segment) : segment);
  }
  return segments;
}

function describe(error: ErrorObject): { type: string; msg: string; extra?: string } {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { type: 'missing', msg: 'Field required', extra: String(p.missingProperty) };
    case 'additionalProperties':
      return {
        type: 'extra_forbidden',
        msg: 'Extra inputs are not permitted',
        extra: String(p.additionalProperty),
      };
    case 'type': {
      const expected = String(p.type).split(',')[0] ?? '';
      const [type, msg] = TYPE_ERRORS[expected] ?? [
        'value_error',
        `Input should be of type ${String(p.type)}`,
      ];
      return { type, msg };
    }
    case 'maxLength':
      return { type: 'string_too_long', msg: `String should have at most ${String(p.limit)} characters` };
    case 'minLength':
      return { type: 'string_too_short', msg: `String should have at least ${String(p.limit)} characters` };
    case 'minimum':
      return {
        type: 'greater_than_equal',
        msg: `Input should be greater than or equal to ${String(p.limit)}`,
      };
    case 'maximum':
      return { type: 'less_than_equal', msg: `Input should be less than or equal to ${String(p.limit)}` };
    case 'exclusiveMinimum':
      return { type: 'greater_than', msg: `Input should be greater than ${String(p.limit)}` };
    case 'exclusiveMaximum':
      return { type: 'less_than', msg: `Input should be less than ${String(p.limit)}` };
    case 'maxItems':
      return { type: 'too_long', msg: `List should have at most ${String(p.limit)} items` };
    case 'minItems':
      return { type: 'too_short', msg: `List should have at least ${String(p.limit)} items` };
    case 'maxProperties':
      return { type: 'too_long', msg: `Object should have at most ${String(p.limit)} properties` };
    case 'enum':
      return {
        type: 'enum',
        msg: `Input should be ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(' or ')}`,
      };
    case 'const':
      return { type: 'literal_error', msg: `Input should be ${JSON.stringify(p.allowedValue)}` };
    case 'discriminator':
      // A `oneOf` chosen by a tag (workflow actions): the tag is absent, or present (of any JSON
      // type, ajv's `tagValue`) but naming no branch.
      return p.error === 'mapping' || p.tagValue !== undefined
        ? { type: 'literal_error', msg: discriminatorMessage(error), extra: String(p.tag) }
        : { type: 'missing', msg: 'Field required', extra: String(p.tag) };
    case 'format':
      return p.format === 'date-time'
        ? { type: 'value_error', msg: 'Input should be a valid date-time (RFC 3339, UTC years 0001..9999)' }
        : { type: 'value_error', msg: `Input should be a valid ${String(p.format)}` };
    case MAX_DEPTH_KEYWORD:
      return { type: 'value_error', msg: `Object nests more than ${String(p.limit)} levels deep` };
    case 'pattern':
      return { type: 'value_error', msg: `String should match pattern '${String(p.pattern)}'` };
    case 'uniqueItems':
      return { type: 'value_error', msg: 'List items should be unique' };
    default:
      return { type: 'value_error', msg: error.message ?? 'Invalid value' };
  }
}

/** "Input should be 'webhook', 'slack' or …", the tag values of the branches. */
function discriminatorMessage(error: ErrorObject): string {
  const tag = String((error.params as Record<string, unknown>).tag);
  const branches = ((error.parentSchema as { oneOf?: unknown[] } | undefined)?.oneOf ?? []) as Array<{
    properties?: Record<string, { const?: unknown; enum?: unknown[] }>;
  }>;
  const values = branches.flatMap((b) => {
    const property = b.properties?.[tag];
    return property?.const !== undefined ? [property.const] : (property?.enum ?? []);
  });
  if (values.length === 0) return `Input should be one of the documented values of '${tag}'`;
  const quoted = values.map((v) => JSON.stringify(v));
  return `Input should be ${quoted.slice(0, -1).join(', ')}${quoted.length > 1 ? ' or ' : ''}${quoted.at(-1)}`;
}

const isCombinator = (e: ErrorObject): boolean =>
  e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if';

export function toValidationIssues(errors: readonly ErrorObject[], context: string): ValidationIssue[] {
  const root = CONTEXT_ROOT[context] ?? context;
  // anyOf/oneOf report every branch's failure and then their own; when a branch-level error exists
  // at the same place, the combinator's summary line adds nothing.
  const skipCombinators = errors.some((e) => !isCombinator(e));
  // Most failing requests break one rule: only several errors can repeat one another.
  const seen = errors.length > 1 ? new Set<string>() : undefined;
  const issues: ValidationIssue[] = [];
  for (const error of errors) {
    if (skipCombinators && isCombinator(error)) continue;
    const { type, msg, extra } = describe(error);
    const loc: Array<string | number> = [root, ...pathSegments(error.instancePath)];
    if (extra !== undefined) loc.push(extra);
    if (seen) {
      const key = `${type}|${JSON.stringify(loc)}`;
      if (seen.has(key)) continue;
      seen.add(key);
    }
    issues.push({ type, loc, msg });
  }
  return issues;
}
