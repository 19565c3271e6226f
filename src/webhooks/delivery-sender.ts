/**
 * One delivery attempt over HTTP (seed §6.2, contract §5): the exact request, a hard timeout
 * covering connect, headers and the body excerpt, no redirects (a 3xx is a failure), and at most
 * 1 KiB of the response body read before the stream is dropped.
 */
import { performance } from 'node:perf_hooks';
import { type Dispatcher, request } from 'undici';
import { describeNetworkError, readExcerpt, USER_AGENT } from '../outbound/http-response.ts';
import { recordedHeaders } from './recorded-headers.ts';
import { signBody } from './signature.ts';

export interface OutgoingDelivery {
  url: string;
  method: string;
  contentType: string;
  timeoutMs: number;
  customHeaders: Record<string, string>;
  secret: string;
  payload: string;
  eventId: string;
  idempotencyKey: string;
  attempt: number;
}

export interface AttemptOutcome {
  success: boolean;
  statusCode: number | null;
  durationMs: number;
  errorMessage: string | null;
  bodyExcerpt: string | null;
  /** The headers sent, for the attempt's record (custom header values masked). */
  requestHeaders: Record<string, string>;
}

/** Headers we set; a custom header of the same name (any case) is dropped, never sent twice. */
const OURS = [
  'content-type',
  'user-agent',
  'x-svc-signature',
  'x-svc-event-id',
  'x-idempotency-key',
  'x-svc-attempt',
  'x-geofencing-service-signature',
  'x-geofencing-service-event-id',
  'x-geofencing-service-attempt',
];
/** Framing headers belong to the HTTP client; a customer value would corrupt the request. */
const FRAMING = [
  'host',
  'content-length',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'expect',
];
const RESERVED = new Set([...OURS, ...FRAMING]);

/** The custom headers of `d` that are sent (those not named like one of ours or a framing header). */
function sentCustomHeaders(d: OutgoingDelivery): Array<[string, string]> {
  return Object.entries(d.customHeaders).filter(([name]) => !RESERVED.has(name.toLowerCase()));
}

export function deliveryHeaders(d: OutgoingDelivery, body: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of sentCustomHeaders(d)) headers[name] = value;
  const signature = signBody(body, d.secret);
  const attempt = String(d.attempt);
  headers['content-type'] = d.contentType;
  headers['user-agent'] = USER_AGENT;
  headers['x-svc-signature'] = signature;
  headers['x-svc-event-id'] = d.eventId;
  headers['x-idempotency-key'] = d.idempotencyKey;
  headers['x-svc-attempt'] = attempt;
  // Deprecated long-prefix duplicates (seed §9), same values.
  headers['x-geofencing-service-signature'] = signature;
  headers['x-geofencing-service-event-id'] = d.eventId;
  headers['x-geofencing-service-attempt'] = attempt;
  return headers;
}

class AttemptTimeout extends Error {}

export async function sendAttempt(dispatcher: Dispatcher, d: OutgoingDelivery): Promise<AttemptOutcome> {
  // GET deliveries carry no body; their signature is the HMAC of the empty body (contract §5).
  const body = d.method === 'GET' ? '' : d.payload;
  const headers = deliveryHeaders(d, body);
  const requestHeaders = recordedHeaders(headers, new Set(sentCustomHeaders(d).map(([name]) => name)));
  const started = performance.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new AttemptTimeout()), d.timeoutMs);
  const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
  let statusCode: number | null = null;
  try {
    const response = await request(d.url, {
      method: d.method as Dispatcher.HttpMethod,
      headers,
      ...(d.method === 'GET' ? {} : { body }),
      dispatcher,
      signal: controller.signal,
      headersTimeout: d.timeoutMs,
      bodyTimeout: d.timeoutMs,
    });
    statusCode = response.statusCode;
    const durationMs = elapsed();
    const bodyExcerpt = await readExcerpt(response.body);
    const success = statusCode >= 200 && statusCode < 300;
    return {
      success,
      statusCode,
      durationMs,
      errorMessage: success ? null : httpFailure(statusCode),
      bodyExcerpt,
      requestHeaders,
    };
  } catch (error) {
    const durationMs = elapsed();
    if (statusCode !== null) {
      // The status arrived in time; only the excerpt failed: the status decides.
      const success = statusCode >= 200 && statusCode < 300;
      return {
        success,
        statusCode,
        durationMs,
        errorMessage: success ? null : httpFailure(statusCode),
        bodyExcerpt: null,
        requestHeaders,
      };
    }
    const message = controller.signal.aborted
      ? `Timed out after ${formatSeconds(d.timeoutMs)} without a response`
      : describeNetworkError(error);
    return {
      success: false,
      statusCode: null,
      durationMs,
      errorMessage: message,
      bodyExcerpt: null,
      requestHeaders,
    };
  } finally {
    clearTimeout(timer);
  }
}

const REASONS: Record<number, string> = {
  300: 'Multiple Choices',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

function httpFailure(status: number): string {
  const reason = REASONS[status];
  const text = `HTTP ${status}${reason ? ` ${reason}` : ''}`;
  return status >= 300 && status < 400 ? `${text} (redirects are not followed)` : text;
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
