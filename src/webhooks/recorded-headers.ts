/**
 * What an attempt's record keeps of its request headers (ADR 018): every header we set, as sent
 * (signature, attempt number, idempotency key, content type), and the names of the webhook's custom
 * headers with their values replaced by `•••`. The record is read by every holder of
 * `webhooks:read`, and a custom header is where customers put the credential their receiver checks;
 * guessing which names carry one (`Authorization`, `X-Api-Key`, but also `X-Pass`, `X-Bearer`, …)
 * would leak the ones the guess misses, so no custom value is kept. The webhook itself shows its
 * configured headers. Our own headers are never masked: they are what the customer compares.
 */

export const MASK = '•••';

/** `sent` with the values of the webhook's custom headers (`customNames`, as sent) masked. */
export function recordedHeaders(
  sent: Readonly<Record<string, string>>,
  customNames: ReadonlySet<string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(sent)) out[name] = customNames.has(name) ? MASK : value;
  return out;
}
