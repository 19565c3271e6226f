/**
 * Schema building blocks shared by every route. They keep schemas valid OpenAPI 3.0: no
 * `type: 'null'` (→ `nullable`), no `const` (→ one-value `enum`).
 */
import { type Static, type TSchema, Type } from 'typebox';
import { freeObject } from './free-object.ts';

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp' });
export const Id = Type.String({ description: 'UUID (version 7)' });
/** Keys kept exactly, 16 levels at most (contract §1): see free-object.ts. */
export const FreeObject = freeObject('Free-form JSON object');

export const ValidationIssueSchema = Type.Object({
  type: Type.String(),
  loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
  msg: Type.String(),
});

export const ErrorSchema = Type.Object(
  {
    detail: Type.Union([Type.String(), Type.Array(ValidationIssueSchema)]),
    error_code: Type.Optional(Type.String()),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { description: 'Error body (seed §7.1)' },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input or business rule violation',
  401: 'Missing, invalid or expired credentials',
  403: 'Insufficient permissions or quota exceeded',
  404: 'Resource not found (or not in your workspace)',
  409: 'Conflict',
  413: 'Request body too large',
  422: 'Request failed schema validation; `detail` is an array of {type, loc, msg}',
  429: 'Rate limit or quota throttle exceeded; see Retry-After',
  500: 'Unexpected server failure',
  503: 'Service unavailable',
};

/** Error responses for a route's schema; 422 and 500 are implied for every route. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const all = new Set([...statuses, 422, 500]);
  const out: Record<number, TSchema> = {};
  for (const status of [...all].sort()) {
    out[status] = Type.Object(ErrorSchema.properties, { description: ERROR_DESCRIPTIONS[status] ?? 'Error' });
  }
  return out;
}

export const MAX_OFFSET = 1_000_000;

export const PaginationQuery = Type.Object({
  // Bounded (contract §1): a larger offset overflowed the databases' integer parameters (500).
  offset: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_OFFSET,
      default: 0,
      description: `Items to skip, 0..${MAX_OFFSET.toLocaleString('en-US')} (default 0)`,
    }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Page size, 1..200 (default 50)' }),
  ),
});

export const PaginationSchema = Type.Object({
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
  has_more: Type.Boolean(),
});

/** The list envelope of every list endpoint (contract §1). */
export function ListOf<T extends TSchema>(item: T, description?: string) {
  return Type.Object(
    { results: Type.Array(item), pagination: PaginationSchema },
    description ? { description } : {},
  );
}

export interface Page<T> {
  results: T[];
  pagination: { total: number; limit: number; offset: number; has_more: boolean };
}

export function page<T>(results: T[], total: number, offset: number, limit: number): Page<T> {
  return { results, pagination: { total, limit, offset, has_more: offset + results.length < total } };
}
