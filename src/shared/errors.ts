/**
 * Domain errors. Services throw these; they know nothing of HTTP. The single error handler in
 * `src/http/error-handler.ts` maps each `code` to a status and the contract's body
 * `{detail, error_code?, details?}` (seed §7, contract §1).
 */
export type ErrorCode =
  | 'NOT_FOUND'
  | 'VALIDATION_ERROR'
  | 'INVALID_GEOMETRY'
  | 'DUPLICATE_RESOURCE'
  | 'NOT_AUTHENTICATED'
  | 'INVALID_CREDENTIALS'
  | 'INVALID_AUTH_TOKEN'
  | 'TOKEN_EXPIRED'
  | 'INSUFFICIENT_PERMISSIONS'
  | 'INVALID_TOKEN'
  | 'RATE_LIMIT_EXCEEDED'
  | 'RATE_LIMITED'
  | 'QUOTA_EXCEEDED'
  | 'SESSION_ACTIVE'
  | 'BAD_REQUEST'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'FORBIDDEN'
  | 'SERVICE_UNAVAILABLE';

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

export class NotFoundError extends DomainError {
  constructor(resource: string) {
    super('NOT_FOUND', `${resource} not found`);
  }
}

/** A business-rule violation detected after schema validation (400 VALIDATION_ERROR). */
/**
 * A field-level failure found after the JSON schema passed (e.g. an unknown time zone, a polygon
 * with too many vertices): answered exactly like a schema failure, 422 with the `detail` array.
 */
export class FieldValidationError extends DomainError {
  readonly issues: Array<{ type: string; loc: Array<string | number>; msg: string }>;
  constructor(issues: Array<{ type: string; loc: Array<string | number>; msg: string }>) {
    super('VALIDATION_ERROR', issues.map((i) => i.msg).join('; '));
    this.issues = issues;
  }
}

export class ValidationError extends DomainError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('VALIDATION_ERROR', message, details);
  }
}

export class BadRequestError extends DomainError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('BAD_REQUEST', message, details);
  }
}

export class DuplicateResourceError extends DomainError {
  constructor(message: string) {
    super('DUPLICATE_RESOURCE', message);
  }
}

export class InvalidGeometryError extends DomainError {
  constructor(message: string, reason: string, location?: readonly [number, number]) {
    super('INVALID_GEOMETRY', message, location ? { reason, location: [...location] } : { reason });
  }
}

export class NotAuthenticatedError extends DomainError {
  constructor(message = 'Not authenticated') {
    super('NOT_AUTHENTICATED', message);
  }
}

export class InvalidCredentialsError extends DomainError {
  constructor() {
    super('INVALID_CREDENTIALS', 'Invalid email or password');
  }
}

/** A bearer token or API key that is malformed, forged, revoked or of the wrong type. */
export class InvalidAuthTokenError extends DomainError {
  constructor(message = 'Invalid token') {
    super('INVALID_AUTH_TOKEN', message);
  }
}

export class TokenExpiredError extends DomainError {
  constructor() {
    super('TOKEN_EXPIRED', 'Token has expired');
  }
}

/** The 403 a device token (contract §2.3b) gets anywhere but its own device's location routes. */
export const DEVICE_TOKEN_REACH = "A device token may only write its own device's locations";

export class InsufficientPermissionsError extends DomainError {
  constructor(message: string) {
    super('INSUFFICIENT_PERMISSIONS', message);
  }
}

/** An e-mail verification, password reset or invitation token that is unknown, used or expired. */
export class InvalidOneTimeTokenError extends DomainError {
  constructor(message = 'Token is invalid or has expired') {
    super('INVALID_TOKEN', message);
  }
}

export class RateLimitExceededError extends DomainError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, limit: number, periodSeconds: number) {
    super('RATE_LIMIT_EXCEEDED', message, { limit, period_seconds: periodSeconds });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class QuotaThrottledError extends DomainError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds: number, details?: Record<string, unknown>) {
    super('RATE_LIMITED', message, details);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class QuotaExceededError extends DomainError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('QUOTA_EXCEEDED', message, details);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message: string) {
    super('FORBIDDEN', message);
  }
}

export class ConflictError extends DomainError {
  constructor(code: 'SESSION_ACTIVE' | 'CONFLICT', message: string) {
    super(code, message);
  }
}

/** An `If-Match` that names a version the record is no longer at (HTTP 412). */
export class PreconditionFailedError extends DomainError {
  constructor(message: string) {
    super('PRECONDITION_FAILED', message);
  }
}

export class ServiceUnavailableError extends DomainError {
  constructor(message: string) {
    super('SERVICE_UNAVAILABLE', message);
  }
}
