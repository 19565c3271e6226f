/**
 * Where a tracker route (contract §4.6) finds its credential. Phones and trackers cannot always set
 * an `Authorization: Bearer` header: OwnTracks and GPSLogger send HTTP Basic credentials, and
 * Traccar Client and GPSLogger's custom URL can only carry a `token` query parameter. On these
 * routes only, the credential (a device token or an API key) may therefore be:
 *   1. `X-API-Key` or `Authorization: Bearer` (as on every route),
 *   2. HTTP Basic: the password is the credential (OwnTracks puts its user name beside it), when
 *      it is one of ours (`gf_dev_…`, `gf_live_…`),
 *   3. the `token` query parameter.
 * A URL holding a credential is never logged unredacted (http/request-logging.ts `withoutToken`).
 */
import type { FastifyRequest } from 'fastify';
import { InvalidAuthTokenError } from '../shared/errors.ts';
import { bearerToken, type Credentials } from './authenticator.ts';
import { looksLikeApiKey, looksLikeDeviceToken } from './secret-tokens.ts';

const BASIC = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i;

export type TrackerCredential =
  | { kind: 'headers'; credentials: Credentials }
  | { kind: 'secret'; secret: string }
  | { kind: 'none' };

export function trackerCredential(request: FastifyRequest): TrackerCredential {
  const authorization = request.headers.authorization;
  const apiKey = request.headers['x-api-key'];
  const basic = authorization === undefined ? undefined : BASIC.exec(authorization);
  // Basic credentials count only when their password is one of ours: a reverse proxy's own Basic
  // login (common in front of self-hosted services) must not shadow the `token` parameter.
  const basicSecret = basic?.[1] === undefined ? undefined : basicPassword(basic[1]);
  if (basicSecret !== undefined && looksLikeCredential(basicSecret))
    return { kind: 'secret', secret: basicSecret };
  if (apiKey !== undefined || (authorization !== undefined && basic === null)) {
    return {
      kind: 'headers',
      credentials: {
        authorization: basic === null ? authorization : undefined,
        apiKey: Array.isArray(apiKey) ? apiKey[0] : apiKey,
      },
    };
  }
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  if (typeof token === 'string' && token !== '') return { kind: 'secret', secret: token };
  // Basic credentials with someone else's password, and nothing else: not ours to accept.
  if (basic?.[1] !== undefined) throw new InvalidAuthTokenError('Invalid credentials');
  return { kind: 'none' };
}

/**
 * The password of `user:password`. Only the password: the user name travels on in OwnTracks'
 * `X-Limit-U` and `topic`, which are kept with the location, so a credential put there would be
 * stored (the dashboard and the README say: any user name, the token as the password).
 */
function basicPassword(encoded: string): string | undefined {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

function looksLikeCredential(secret: string): boolean {
  return looksLikeApiKey(secret) || looksLikeDeviceToken(secret);
}

/** The credential the request presents, however it came (to keep it out of what is stored). */
export function presentedSecret(request: FastifyRequest): string | undefined {
  const found = trackerCredentialOrNone(request);
  if (found.kind === 'secret') return found.secret;
  if (found.kind === 'none') return undefined;
  const { apiKey, authorization } = found.credentials;
  return apiKey ?? (authorization === undefined ? undefined : bearerToken(authorization));
}

function trackerCredentialOrNone(request: FastifyRequest): TrackerCredential {
  try {
    return trackerCredential(request);
  } catch {
    return { kind: 'none' };
  }
}
