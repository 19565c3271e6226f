/**
 * Where a server error lands in the geofence form: a 400 INVALID_GEOMETRY at the geometry field
 * and on the map, a 422's issues beside their fields. Pure, so the placing is tested without a
 * browser; the form turns the issues left over into its summary.
 */
import { formatPosition } from '../../ui/format.ts';
import { FIX_BELOW, type FieldErrors, type FieldName } from './geofenceFormState.ts';

const FIELDS: readonly FieldName[] = [
  'name',
  'description',
  'external_id',
  'metadata',
  'geometry',
  'enabled',
  'dwell_seconds',
  'exit_buffer_m',
  'max_accuracy_m',
];

interface ErrorBody {
  detail?: unknown;
  error_code?: string;
  details?: Record<string, unknown>;
}

export interface Issue {
  loc?: (string | number)[];
  msg?: string;
}

export function errorBody(error: unknown): ErrorBody {
  return (error ?? {}) as ErrorBody;
}

/** A 400 INVALID_GEOMETRY: the message for the field, and where it happened (if the server said). */
export function geometryErrorOf(
  body: ErrorBody,
): { field: string; detail: string; location: [number, number] | null } | null {
  if (body.error_code !== 'INVALID_GEOMETRY' || typeof body.detail !== 'string') return null;
  const reason = typeof body.details?.reason === 'string' ? body.details.reason : null;
  const location = asPosition(body.details?.location);
  const where = location ? ` at ${formatPosition(location)}` : '';
  return { field: `${body.detail}${reason ? ` (${reason}${where})` : ''}`, detail: body.detail, location };
}

/** A 422's issues placed at their fields; those of no field of the form are left over. */
export function fieldIssuesOf(
  status: number,
  body: ErrorBody,
): { fieldErrors: FieldErrors; unplaced: Issue[] } | null {
  if (status !== 422 || !Array.isArray(body.detail)) return null;
  const fieldErrors: FieldErrors = {};
  const unplaced: Issue[] = [];
  for (const issue of body.detail as Issue[]) {
    const field = FIELDS.find((f) => issue.loc?.[0] === 'body' && issue.loc[1] === f);
    const where = (issue.loc ?? []).slice(2).join('.');
    const text = `${where ? `${where}: ` : ''}${issue.msg ?? 'invalid'}`;
    if (field) fieldErrors[field] = fieldErrors[field] ? `${fieldErrors[field]}; ${text}` : text;
    else unplaced.push(issue);
  }
  return { fieldErrors, unplaced };
}

export function summaryOfUnplaced(messages: readonly string[]): string {
  return messages.length > 0 ? messages.join('; ') : FIX_BELOW;
}

function asPosition(value: unknown): [number, number] | null {
  return Array.isArray(value) && typeof value[0] === 'number' && typeof value[1] === 'number'
    ? [value[0], value[1]]
    : null;
}
