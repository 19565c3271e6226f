/**
 * Schema building blocks shared by every route. They keep schemas valid OpenAPI 3.0: no
 * `type: 'null'` (→ `nullable`), no `const` (→ one-value `enum`).
 */
import { type Static, type TSchema, Type } from 'typebox';
import { component, componentName, describedComponent } from './components.ts';
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

export const ValidationIssueSchema = component(
  'ValidationIssue',
  Type.Object(
    {
      type: Type.String({
        description: 'What is wrong, e.g. `missing`, `string_too_long`, `extra_forbidden`',
      }),
      loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
        description: 'Where: `body`, `query` or `path`, then the field names and array indexes',
      }),
      msg: Type.String(),
    },
    { description: 'One schema-validation problem (contract §1)' },
  ),
);

export const ErrorSchema = component(
  'Error',
  Type.Object(
    {
      detail: Type.Union([Type.String(), Type.Array(ValidationIssueSchema)], {
        description: 'A message, or for 422 the list of validation problems',
      }),
      error_code: Type.Optional(Type.String({ description: 'e.g. `VALIDATION_ERROR`, `NOT_FOUND`' })),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    },
    { description: 'Error body (seed §7.1, contract §1)' },
  ),
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input or business rule violation',
  401: 'Missing, invalid or expired credentials',
  403: 'Insufficient permissions or quota exceeded',
  404: 'Resource not found (or not in your workspace)',
  409: 'Conflict',
  412: 'The record changed since the version `If-Match` names (see its `ETag`)',
  413: 'Request body too large',
  422: 'Request failed schema validation; `detail` is an array of {type, loc, msg}',
  429: 'Rate limit or quota throttle exceeded; see Retry-After',
  500: 'Unexpected server failure',
  503: 'Service unavailable',
};

/**
 * Error responses for a route's schema; 422 and 500 are implied for every route. The statuses every
 * route of its kind can answer (malformed JSON, credentials, body limit…) are added to the document
 * by common-error-responses.ts; a route lists here the errors of its own logic.
 */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const all = new Set([...statuses, 422, 500]);
  const out: Record<number, TSchema> = {};
  for (const status of [...all].sort()) {
    out[status] = describedComponent(ErrorSchema, ERROR_DESCRIPTIONS[status] ?? 'Error');
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

export const PaginationSchema = component(
  'Pagination',
  Type.Object({
    total: Type.Integer({ description: 'Items matching the filters' }),
    limit: Type.Integer(),
    offset: Type.Integer(),
    has_more: Type.Boolean({ description: 'More items after this page' }),
  }),
);

/**
 * The list envelope of every list endpoint (contract §1); for a named item it is the component
 * `<item>List`, so every list of the same item is one named type.
 */
export function ListOf<T extends TSchema>(item: T, description?: string) {
  const envelope = Type.Object({ results: Type.Array(item), pagination: PaginationSchema });
  const itemName = componentName(item);
  if (itemName === undefined)
    return description ? Type.Object(envelope.properties, { description }) : envelope;
  const named = component(`${itemName}List`, envelope);
  return description ? describedComponent(named, description) : named;
}

export interface Page<T> {
  results: T[];
  pagination: { total: number; limit: number; offset: number; has_more: boolean };
}

export function page<T>(results: T[], total: number, offset: number, limit: number): Page<T> {
  return { results, pagination: { total, limit, offset, has_more: offset + results.length < total } };
}
