/**
 * Checks on webhook fields that the JSON schema cannot express (contract §5, ADR 009): the URL
 * scheme and literal private targets, custom header names and the headers reserved to the
 * service, and geofence ids of the workspace. Schema-like failures are 422 with the `detail`
 * array; a private target is the contract's 400 VALIDATION_ERROR.
 */

import { checkTargetUrl } from '../outbound/target-rules.ts';
import { FieldValidationError } from '../shared/errors.ts';

type Issue = { type: string; loc: Array<string | number>; msg: string };

/** RFC 9110 §5.1: a field name is a token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** RFC 9110 §5.5: visible characters, spaces and tabs; never CR, LF or NUL (header injection). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Headers the service sets on every delivery (seed §6.2, contract §5); custom ones may not override them. */
const SERVICE_HEADERS = new Set([
  'x-idempotency-key',
  'content-type',
  'content-length',
  'host',
  'user-agent',
]);
/** Our own header families, including names we may add later. */
const SERVICE_PREFIXES = ['x-svc-', 'x-geofencing-service-'];
/** Connection-level headers: they would break or smuggle the HTTP framing of the request. */
const CONNECTION_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'content-encoding',
]);

/** Why `name` cannot be a custom header, or null when it can. */
export function reservedHeaderReason(name: string): string | null {
  const lower = name.toLowerCase();
  if (lower === 'content-type') return 'set the content type with the content_type field instead';
  if (SERVICE_HEADERS.has(lower) || SERVICE_PREFIXES.some((p) => lower.startsWith(p))) {
    return 'the service sets this header itself and custom headers cannot override it';
  }
  if (CONNECTION_HEADERS.has(lower)) return 'connection-level headers are managed by the HTTP client';
  return null;
}

export function checkWebhookHeaders(headers: Record<string, string>): void {
  const issues: Issue[] = [];
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    const loc = ['body', 'headers', name];
    if (!HEADER_NAME.test(name)) {
      issues.push({ type: 'value_error', loc, msg: `"${name}" is not a valid HTTP header name` });
      continue;
    }
    const reserved = reservedHeaderReason(name);
    if (reserved !== null)
      issues.push({ type: 'value_error', loc, msg: `Header "${name}" is reserved: ${reserved}` });
    const earlier = seen.get(name.toLowerCase());
    if (earlier !== undefined) {
      issues.push({
        type: 'value_error',
        loc,
        msg: `Header "${name}" repeats "${earlier}" (names are case-insensitive)`,
      });
    }
    seen.set(name.toLowerCase(), name);
    if (!HEADER_VALUE.test(value)) {
      issues.push({
        type: 'value_error',
        loc,
        msg: 'Header values may not contain control characters such as CR or LF',
      });
    }
  }
  if (issues.length > 0) throw new FieldValidationError(issues);
}

/**
 * http(s) only, a host written after `//`, no credentials in the URL (put them in a custom header: the fetch standard
 * refuses URLs with credentials), and no literal private address unless allowed.
 */
export function checkWebhookUrl(raw: string, allowPrivateTargets: boolean): void {
  checkTargetUrl(raw, allowPrivateTargets, { loc: ['body', 'url'], label: 'Webhook url', what: 'webhooks' });
}

/** 422 naming each id of `ids` that is not a geofence of the workspace. */
export function unknownGeofenceIssues(ids: readonly string[], known: ReadonlySet<string>): void {
  const issues: Issue[] = ids.flatMap((id, index) =>
    known.has(id)
      ? []
      : [
          {
            type: 'value_error',
            loc: ['body', 'geofence_ids', index],
            msg: `Geofence ${id} not found in this workspace`,
          },
        ],
  );
  if (issues.length > 0) throw new FieldValidationError(issues);
}
