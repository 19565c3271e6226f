/**
 * The rules of any outbound http(s) URL a customer configures (webhooks, workflow actions;
 * contract §5, ADR 009): a written host, no credentials, and no literal private address unless
 * allowed. Schema-like failures are 422 with the `detail` array; a private target is 400.
 */
import { FieldValidationError, ValidationError } from '../shared/errors.ts';
import { ALLOW_PRIVATE_HINT, classifyAddress, literalHostAddress } from './outbound-guard.ts';

/** `scheme://` followed by a non-empty authority, as written (before any URL normalisation). */
const WRITTEN_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]/i;

export interface TargetUrlPlace {
  /** Where a 422 points. */
  loc: Array<string | number>;
  /** What the 400 calls the URL ("Webhook url"). */
  label: string;
  /** What may not target private addresses ("webhooks"). */
  what: string;
}

/** The rules of `checkWebhookUrl` for any outbound http(s) URL a customer configures. */
export function checkTargetUrl(raw: string, allowPrivateTargets: boolean, place: TargetUrlPlace): void {
  const { loc } = place;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FieldValidationError([{ type: 'value_error', loc, msg: 'Input should be a valid URL' }]);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FieldValidationError([
      { type: 'value_error', loc, msg: "URL scheme should be 'http' or 'https'" },
    ]);
  }
  // WHATWG parsing reads `http:///x` and `http:x` as host `x`; RFC 3986 §3.2 and RFC 9110 §4.2.1
  // read an empty host there, which the receiver's URL parser may too: the host must be written.
  if (!WRITTEN_AUTHORITY.test(raw) || url.hostname === '') {
    throw new FieldValidationError([
      { type: 'value_error', loc, msg: 'URL should name a host, as in https://host/path' },
    ]);
  }
  if (url.username !== '' || url.password !== '') {
    throw new FieldValidationError([
      {
        type: 'value_error',
        loc,
        msg: 'URL may not contain credentials; send them in a custom header such as Authorization',
      },
    ]);
  }
  checkTargetHost(url, allowPrivateTargets, place);
}

/** 400 when the URL's host is a literal loopback, private, link-local, … address (unless allowed). */
export function checkTargetHost(url: URL, allowPrivateTargets: boolean, place: TargetUrlPlace): void {
  if (allowPrivateTargets) return;
  const address = literalHostAddress(url);
  const reason = address === null ? null : classifyAddress(address);
  if (address !== null && reason !== null) {
    throw new ValidationError(
      `${place.label} host ${url.hostname} is ${/^[aeiou]/i.test(reason) ? 'an' : 'a'} ${reason} address ` +
        `(${address}); ${place.what} may not target loopback, private, link-local, CGNAT, multicast or ` +
        `metadata addresses (${ALLOW_PRIVATE_HINT})`,
    );
  }
}
