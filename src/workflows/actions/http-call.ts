/**
 * One outbound HTTP request of a workflow action (Slack, Discord, Teams, Twilio): the same rules
 * as a webhook delivery attempt (contract §5): through the SSRF-guarded dispatcher, a hard timeout
 * covering connect, headers and the body excerpt, no redirects (a 3xx is a failure), at most 1 KiB
 * of the answer kept, 2xx = success. Error messages name the service and its answer, never the
 * URL: a chat webhook URL's path is its credential, and `secrets` are blanked wherever the
 * target's answer or an error would repeat them.
 */
import { STATUS_CODES } from 'node:http';
import { request } from 'undici';
import { describeNetworkError, readExcerpt, USER_AGENT } from '../../outbound/http-response.ts';
import type { ActionOutcome, ActionRuntime } from './action.ts';

export interface HttpCall {
  /** Names the target in error messages: "Slack answered HTTP 404 Not Found: no_service". */
  service: string;
  url: string;
  /** Request headers besides `user-agent`. */
  headers: Record<string, string>;
  body: string;
  /** Values that must never appear in the outcome (URL path, tokens, an Authorization value). */
  secrets: readonly string[];
  /** Words for a failed answer's body (e.g. Twilio's error code and message); default its text. */
  failureDetail?: (excerpt: string) => string | null;
}

/** How much of a failed answer an error message quotes; the excerpt keeps up to 1 KiB. */
const DETAIL_CHARS = 200;
const REDACTED = '…';

class CallTimeout extends Error {}

/** POSTs `call.body` once and reports the outcome; never throws. */
export async function sendHttpCall(
  call: HttpCall,
  runtime: Pick<ActionRuntime, 'dispatcher' | 'timeoutMs'>,
): Promise<ActionOutcome> {
  const redact = redactor(call.secrets);
  const url = httpUrl(call.url);
  if (url === null) return failure(`The ${call.service} URL is not a valid http(s) URL; nothing was sent`);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new CallTimeout()), runtime.timeoutMs);
  let statusCode: number | null = null;
  try {
    const response = await request(url, {
      method: 'POST',
      headers: { ...call.headers, 'user-agent': USER_AGENT },
      body: call.body,
      dispatcher: runtime.dispatcher,
      // One bound for the whole attempt (connect, headers, excerpt): the timer above aborts it.
      signal: controller.signal,
    });
    statusCode = response.statusCode;
    const raw = await readExcerpt(response.body);
    const excerpt = raw === null ? null : redact(raw);
    return answered(call, statusCode, excerpt, redact);
  } catch (error) {
    // The status arrived in time and only the excerpt failed: the status decides.
    if (statusCode !== null) return answered(call, statusCode, null, redact);
    const why = controller.signal.aborted
      ? `${call.service} did not answer within ${runtime.timeoutMs} ms`
      : `Could not reach ${call.service}: ${describeNetworkError(error)}`;
    return failure(redact(why));
  } finally {
    clearTimeout(timer);
  }
}

function answered(
  call: HttpCall,
  statusCode: number,
  excerpt: string | null,
  redact: (text: string) => string,
): ActionOutcome {
  if (statusCode >= 200 && statusCode < 300) {
    return { success: true, statusCode, errorMessage: null, responseExcerpt: excerpt };
  }
  const reason = STATUS_CODES[statusCode];
  let message = `${call.service} answered HTTP ${statusCode}${reason ? ` ${reason}` : ''}`;
  if (statusCode >= 300 && statusCode < 400) message += ' (redirects are not followed)';
  const detail = excerpt === null ? '' : oneLine(call.failureDetail?.(excerpt) ?? excerpt);
  if (detail) message += `: ${truncateText(redact(detail), DETAIL_CHARS)}`;
  return { success: false, statusCode, errorMessage: message, responseExcerpt: excerpt };
}

/** A failure before any answer (invalid config, network, timeout). */
export function failure(errorMessage: string): ActionOutcome {
  return { success: false, statusCode: null, errorMessage, responseExcerpt: null };
}

function httpUrl(text: string): URL | null {
  if (!URL.canParse(text)) return null;
  const url = new URL(text);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
}

/**
 * The secret parts of a chat webhook URL: its path and query, whole and piece by piece (a target
 * that echoes only the token segment must not leak it either). Short pieces are left alone: they
 * are words like `api`, not credentials, and blanking them would garble the answer.
 */
export function urlSecrets(text: string): string[] {
  if (!URL.canParse(text)) return [text];
  const url = new URL(text);
  const pieces = [
    ...url.pathname.split('/'),
    ...[...url.searchParams.values()],
    ...url.search.slice(1).split('&'),
  ];
  const decoded = pieces.map((piece) => {
    try {
      return decodeURIComponent(piece);
    } catch {
      return piece;
    }
  });
  const long = [...pieces, ...decoded].filter((piece) => piece.length >= 8);
  return [`${url.pathname}${url.search}`, url.pathname, url.search, ...long].filter((s) => s.length > 1);
}

/** Blanks every secret, longest first so that a secret containing another is blanked whole. */
function redactor(secrets: readonly string[]): (text: string) => string {
  const ordered = [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  return (text) => ordered.reduce((result, secret) => result.replaceAll(secret, REDACTED), text);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * `text` cut to at most `max` UTF-16 units, ending in "…" when cut (never splitting a surrogate
 * pair): the message limits of Discord (2000) and Twilio (1600) count characters.
 */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}
