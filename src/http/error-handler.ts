/**
 * The one place where errors become HTTP responses (seed §7, contract §1). Domain errors carry a
 * code; this table gives each code its status and decides whether `error_code` is shown. Anything
 * unexpected is logged with the request id and answered as a bare 500.
 */
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DatabaseUnavailableError,
  isConnectionFailure,
} from '../db/availability.ts';
import {
  DomainError,
  type ErrorCode,
  FieldValidationError,
  QuotaThrottledError,
  RateLimitExceededError,
} from '../shared/errors.ts';
import { toValidationIssues, type ValidationIssue } from './validation-errors.ts';

interface ErrorMapping {
  status: number;
  /** The contract shows some 401s with only `detail`; those codes are not echoed. */
  showCode: boolean;
}

const MAPPINGS: Record<ErrorCode, ErrorMapping> = {
  NOT_FOUND: { status: 404, showCode: true },
  VALIDATION_ERROR: { status: 400, showCode: true },
  INVALID_GEOMETRY: { status: 400, showCode: true },
  DUPLICATE_RESOURCE: { status: 400, showCode: true },
  BAD_REQUEST: { status: 400, showCode: false },
  INVALID_TOKEN: { status: 400, showCode: true },
  SESSION_ACTIVE: { status: 400, showCode: true },
  NOT_AUTHENTICATED: { status: 401, showCode: false },
  INVALID_CREDENTIALS: { status: 401, showCode: false },
  INVALID_AUTH_TOKEN: { status: 401, showCode: false },
  TOKEN_EXPIRED: { status: 401, showCode: true },
  INSUFFICIENT_PERMISSIONS: { status: 403, showCode: true },
  FORBIDDEN: { status: 403, showCode: false },
  QUOTA_EXCEEDED: { status: 403, showCode: true },
  CONFLICT: { status: 409, showCode: true },
  PRECONDITION_FAILED: { status: 412, showCode: true },
  RATE_LIMIT_EXCEEDED: { status: 429, showCode: true },
  RATE_LIMITED: { status: 429, showCode: true },
  SERVICE_UNAVAILABLE: { status: 503, showCode: true },
};

export interface ErrorBody {
  detail: string | ValidationIssue[];
  error_code?: string;
  details?: Record<string, unknown>;
}

export function statusForCode(code: ErrorCode): number {
  return MAPPINGS[code].status;
}

/**
 * The contract's body of a domain error: what its answer carries, and what a batch carries for an
 * item refused with it (POST /geofences/batch).
 */
export function domainErrorBody(error: DomainError): ErrorBody {
  if (error instanceof FieldValidationError) return { detail: error.issues, error_code: 'VALIDATION_ERROR' };
  const body: ErrorBody = { detail: error.message };
  if (MAPPINGS[error.code].showCode) body.error_code = error.code;
  if (error.details) body.details = error.details;
  return body;
}

function sendDomainError(error: DomainError, reply: FastifyReply): FastifyReply {
  if (error instanceof FieldValidationError) return reply.status(422).send(domainErrorBody(error));
  const mapping = MAPPINGS[error.code];
  const body = domainErrorBody(error);
  if (mapping.status === 401) reply.header('WWW-Authenticate', 'Bearer');
  if (
    error instanceof RateLimitExceededError ||
    error instanceof QuotaThrottledError ||
    error instanceof DatabaseUnavailableError
  ) {
    reply.header('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  } else if (error.code === 'SERVICE_UNAVAILABLE') {
    reply.header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
  }
  return reply.status(mapping.status).send(body);
}

const FRAMEWORK_ERRORS: Record<string, { status: number; detail: string; code?: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, detail: 'Malformed JSON body', code: 'VALIDATION_ERROR' },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    detail: 'Malformed JSON body: the body is empty but Content-Type is application/json',
    code: 'VALIDATION_ERROR',
  },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, detail: 'Request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, detail: 'Unsupported Content-Type; send application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, detail: 'Content-Length does not match the body' },
};

export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof DomainError) {
    if (error instanceof DatabaseUnavailableError) logUnavailable(request, error);
    return sendDomainError(error, reply);
  }
  // A lost database connection that reached here without passing the driver (contract §0): 503.
  if (isConnectionFailure(error)) {
    const unavailable = new DatabaseUnavailableError(error);
    logUnavailable(request, unavailable);
    return sendDomainError(unavailable, reply);
  }

  if (error.validation) {
    const detail = toValidationIssues(error.validation as ErrorObject[], error.validationContext ?? 'body');
    return reply.status(422).send({ detail, error_code: 'VALIDATION_ERROR' });
  }

  const framework = error.code ? FRAMEWORK_ERRORS[error.code] : undefined;
  if (framework) {
    const body: ErrorBody = {
      detail:
        framework.code === 'VALIDATION_ERROR' ? `${framework.detail}: ${error.message}` : framework.detail,
    };
    if (framework.code) body.error_code = framework.code;
    return reply.status(framework.status).send(body);
  }
  // Parser errors without a known code (e.g. a SyntaxError from a custom parser).
  if (error instanceof SyntaxError && (error as FastifyError).statusCode === 400) {
    return reply.status(400).send({ detail: 'Malformed JSON body', error_code: 'VALIDATION_ERROR' });
  }
  // Other framework errors that carry a client status (4xx) are safe to describe.
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return reply.status(error.statusCode).send({ detail: error.message });
  }

  request.log.error({ err: error, reqId: request.id }, 'unhandled error');
  return reply.status(500).send({ detail: 'Internal server error', details: { request_id: request.id } });
}

let lastUnavailableLog = 0;
let unloggedUnavailable = 0;

/**
 * At most one warning a second, with the number of 503s since the last: an operator sees the
 * outage in the log, and thousands of answers a second do not flood it.
 */
function logUnavailable(request: FastifyRequest, error: DatabaseUnavailableError): void {
  unloggedUnavailable += 1;
  const now = Date.now();
  if (now - lastUnavailableLog < 1000) return;
  lastUnavailableLog = now;
  const cause = error.cause as { message?: unknown; code?: unknown } | undefined;
  request.log.warn(
    {
      reqId: request.id,
      cause: typeof cause?.message === 'string' ? cause.message : String(cause),
      code: cause?.code,
      answered_503: unloggedUnavailable,
    },
    'database unavailable: answering 503',
  );
  unloggedUnavailable = 0;
}

/**
 * Errors Fastify meets before a route is found, passed to its `frameworkErrors` option: without it
 * Fastify answers them with its own body. A path whose percent-encoding is not UTF-8 (e.g.
 * `/devices/%E0%A4%A`) is a malformed request, like malformed JSON: 400 VALIDATION_ERROR (ADR 003).
 */
export function handleFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (error.code === 'FST_ERR_BAD_URL') {
    reply.status(400).send({
      detail: 'Malformed URL: a percent-encoded sequence of the path is not valid UTF-8',
      error_code: 'VALIDATION_ERROR',
    });
    return;
  }
  handleError(error, request, reply);
}

export function registerErrorHandling(
  app: FastifyInstance,
  methodsFor: (method: string, url: string) => string[],
  /** Answers an address no route serves (the dashboard's pages), or returns undefined for the 404. */
  pageFallback?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined,
): void {
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    const page = pageFallback?.(request, reply);
    if (page) return page;
    const allowed = methodsFor(request.method, request.url);
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return reply.status(405).send({ detail: `Method ${request.method} not allowed` });
    }
    return reply.status(404).send({ detail: 'Not found', error_code: 'NOT_FOUND' });
  });
}
