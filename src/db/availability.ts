/**
 * Contract §0 (faults): while the database cannot be reached, a request that needs it answers 503
 * `SERVICE_UNAVAILABLE` with `Retry-After`, never a 500 and never a hang. This module tells a lost
 * or refused connection from an error of one statement, so that the driver can turn the first kind
 * into `DatabaseUnavailableError` and the error handler can answer it.
 *
 * A statement's own failure (a constraint, a syntax error, a serialisation failure) is not a fault
 * of the database's availability: it keeps its meaning and its handling.
 */
import { ServiceUnavailableError } from '../shared/errors.ts';

/** What a client should wait before trying again: a restart takes a second or two. */
export const DATABASE_RETRY_AFTER_SECONDS = 2;

export class DatabaseUnavailableError extends ServiceUnavailableError {
  readonly retryAfterSeconds = DATABASE_RETRY_AFTER_SECONDS;
  constructor(cause: unknown) {
    super('The database is unavailable; retry in a moment');
    this.cause = cause;
  }
}

/** Operating-system errors of a socket that never connected or was cut. */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that mean the session, not the statement, is gone or refused: class 08 (connection
 * exception), the server shutting down or starting up (57P01..57P03), too many connections (53300).
 */
function isUnavailableState(state: string): boolean {
  return (
    state.startsWith('08') || state === '57P01' || state === '57P02' || state === '57P03' || state === '53300'
  );
}

/** pg's own messages for a client whose connection is gone (it attaches no code to these). */
const LOST_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'is not queryable',
  'Cannot use a pool after calling end on the pool',
  'Client was closed',
];

export function isConnectionFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; depth++) {
    if (e instanceof DatabaseUnavailableError) return true;
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (SOCKET_ERRORS.has(code)) return true;
      if (/^[0-9A-Z]{5}$/.test(code) && isUnavailableState(code)) return true;
    }
    if (typeof message === 'string' && LOST_CONNECTION_MESSAGES.some((m) => message.includes(m))) return true;
    // An AggregateError (several addresses refused) or a wrapped error: look inside.
    const inner = (e as { errors?: unknown }).errors;
    if (Array.isArray(inner) && inner.some((item) => isConnectionFailure(item))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The error to throw for `error`: a connection failure becomes `DatabaseUnavailableError`. */
export function asAvailabilityError(error: unknown): unknown {
  if (error instanceof DatabaseUnavailableError || !isConnectionFailure(error)) return error;
  return new DatabaseUnavailableError(error);
}
