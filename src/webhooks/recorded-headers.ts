/**
 * What an attempt's record keeps of its request headers (ADR 018): every header we set, as sent
 * (signature, timestamps in the payload, attempt number, idempotency key), and the webhook's custom
 * headers — except that a custom header whose name looks like it carries a credential has its value
 * replaced by `•••`. The record is read by every member with `webhooks:read`; the credential a
 * customer gave their receiver is not theirs to read back from here (GET /webhooks/{id} shows the
 * configured headers to those who manage the webhook). Our own headers are never masked: the
 * signature is an HMAC that proves nothing without the body and cannot be replayed with another.
 */

export const MASK = '•••';

/** Name fragments (case-insensitive) of custom headers whose values are masked. */
const SECRET_LOOKING = /auth|token|key|secret|passw|cookie|credential|session|signature/i;

export function looksSecret(headerName: string): boolean {
  return SECRET_LOOKING.test(headerName);
}

/**
 * `sent` with the values of the custom headers among them masked where their names look secret.
 * `customNames` are the names of the webhook's custom headers that were actually sent.
 */
export function recordedHeaders(
  sent: Readonly<Record<string, string>>,
  customNames: ReadonlySet<string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(sent)) {
    out[name] = customNames.has(name) && looksSecret(name) ? MASK : value;
  }
  return out;
}
