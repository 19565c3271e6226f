/**
 * Outbound webhook signing (seed §6.2): `X-SVC-Signature: sha256=<hex HMAC-SHA256 of the raw
 * body>` keyed with the webhook's `whsec_…` secret. This module has no I/O so receivers can
 * import it from the package root (src/index.ts) without opening a database.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'sha256=';
const HEX_DIGEST = /^[0-9a-fA-F]{64}$/;

/** `sha256=<hex>` over the exact bytes sent; a GET delivery signs the empty body. */
export function signBody(body: string | Uint8Array, secret: string): string {
  return PREFIX + createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * The receiver's check (seed §6.2): recompute the HMAC over the raw body bytes (before any
 * JSON parsing) and compare in constant time. Returns false, never throws, for a missing
 * header, a missing `sha256=` prefix or malformed hex.
 */
export function verifySignature(
  rawBody: string | Uint8Array,
  header: string | undefined | null,
  secret: string,
): boolean {
  if (typeof header !== 'string' || !header.startsWith(PREFIX)) return false;
  const hex = header.slice(PREFIX.length).trim();
  // Buffer.from(hex, 'hex') silently stops at the first bad character, so check the shape first.
  if (!HEX_DIGEST.test(hex)) return false;
  try {
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    return timingSafeEqual(expected, Buffer.from(hex, 'hex'));
  } catch {
    // A non-string secret or body from an untyped caller: treat as not verified.
    return false;
  }
}

/** A new signing secret: `whsec_` + 32 random bytes in base64url (256 bits of entropy). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
