/**
 * What every outbound HTTP call of the service shares (webhook deliveries and workflow actions):
 * the User-Agent, the bounded read of a response body's beginning, and a human message for a
 * failed connection.
 */
import type { Dispatcher } from 'undici';

export const USER_AGENT = 'Service-Webhooks/1.0';
export const EXCERPT_BYTES = 1024;

export async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string | null> {
  const parts: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    parts.push(buffer);
    length += buffer.length;
    // Stop reading: leaving the loop destroys the stream, so a huge body is never downloaded.
    if (length >= EXCERPT_BYTES) break;
  }
  if (length === 0) return null;
  return Buffer.concat(parts).subarray(0, EXCERPT_BYTES).toString('utf8');
}

interface ErrorLike {
  name?: string;
  code?: string;
  message?: string;
  cause?: unknown;
}

/** A human message for a failed connection; the SSRF guard's refusal is passed on as written. */
export function describeNetworkError(error: unknown): string {
  const chain: ErrorLike[] = [];
  let current: unknown = error;
  while (typeof current === 'object' && current !== null && chain.length < 5) {
    chain.push(current as ErrorLike);
    current = (current as ErrorLike).cause;
  }
  const forbidden = chain.find((e) => e.name === 'ForbiddenTargetError');
  if (forbidden) return `${forbidden.message ?? 'Refused private target'}; nothing was sent`;
  const codes = new Set(chain.map((e) => e.code).filter((c): c is string => typeof c === 'string'));
  if (codes.has('ECONNREFUSED')) return 'Connection refused (ECONNREFUSED)';
  if (codes.has('ENOTFOUND') || codes.has('EAI_AGAIN')) return 'DNS lookup failed (host not found)';
  if (codes.has('UND_ERR_CONNECT_TIMEOUT') || codes.has('ETIMEDOUT')) return 'Connection timed out';
  if (codes.has('ECONNRESET') || codes.has('UND_ERR_SOCKET') || codes.has('EPIPE')) {
    return 'Connection closed by the receiver before a response';
  }
  if (codes.has('UND_ERR_HEADERS_TIMEOUT') || codes.has('UND_ERR_BODY_TIMEOUT'))
    return 'Timed out waiting for the response';
  const first = chain[0];
  return `Network error: ${first?.message ?? String(error)}`;
}
