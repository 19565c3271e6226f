/**
 * Where a tracker route (contract §4.6) finds its credential. Phones and trackers cannot always set
 * an `Authorization: Bearer` header: OwnTracks and GPSLogger send HTTP Basic credentials, and
 * Traccar Client and GPSLogger's custom URL can only carry a `token` query parameter. On these
 * routes only, the credential (a device token or an API key) may therefore be:
 *   1. `X-API-Key` or `Authorization: Bearer` (as on every route),
 *   2. HTTP Basic: the password is the credential (OwnTracks puts its user name beside it; a
 *      client that has only a user name field may put the credential there and leave the password empty),
 *   3. the `token` query parameter.
 * A URL holding a credential is never logged unredacted (http/request-logging.ts `withoutToken`).
 */
import type { FastifyRequest } from 'fastify';
import { InvalidAuthTokenError } from '../shared/errors.ts';
import type { Credentials } from './authenticator.ts';

const BASIC = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i;

export type TrackerCredential =
  | { kind: 'headers'; credentials: Credentials }
  | { kind: 'secret'; secret: string }
  | { kind: 'none' };

export function trackerCredential(request: FastifyRequest): TrackerCredential {
  const authorization = request.headers.authorization;
  const apiKey = request.headers['x-api-key'];
  const basic = authorization === undefined ? undefined : BASIC.exec(authorization);
  if (basic?.[1] !== undefined) return { kind: 'secret', secret: basicSecret(basic[1]) };
  if (authorization !== undefined || apiKey !== undefined) {
    return {
      kind: 'headers',
      credentials: { authorization, apiKey: Array.isArray(apiKey) ? apiKey[0] : apiKey },
    };
  }
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  if (typeof token === 'string' && token !== '') return { kind: 'secret', secret: token };
  return { kind: 'none' };
}

function basicSecret(encoded: string): string {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new InvalidAuthTokenError('Invalid credentials');
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  const secret = password !== '' ? password : user;
  if (secret === '') throw new InvalidAuthTokenError('Invalid credentials');
  return secret;
}
