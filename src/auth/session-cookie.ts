/**
 * Browser sessions (contract §2.2): the dashboard keeps its refresh token in a cookie page script
 * cannot read, so a reload or a new tab stays signed in while an injected script still cannot
 * carry the session away. Two cookies:
 * - `gf_refresh`, the refresh token: `HttpOnly`, `SameSite=Strict`, `Path` the auth routes only
 *   (no other route ever receives it), `Secure` when PUBLIC_URL is https;
 * - `gf_session=1`, readable by the page, which only says a refresh cookie was set, so a page
 *   without a session does not ask the server (and log a 401) on every load.
 * A refresh from the cookie is honoured only when the request comes from the service's own origin
 * (`Origin` is PUBLIC_URL's origin or names the host the request was sent to): SameSite already
 * keeps other sites' requests from carrying the cookie, and this also refuses a same-site sibling.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { REFRESH_TOKEN_TTL_SECONDS } from './jwt-tokens.ts';

export const REFRESH_COOKIE = 'gf_refresh';
export const SIGNED_IN_COOKIE = 'gf_session';

export interface SessionCookies {
  /** Sets both cookies for a refresh token just issued. */
  set(reply: FastifyReply, refreshToken: string): void;
  /** Expires both cookies. */
  clear(reply: FastifyReply): void;
  /** The refresh token the request's cookie carries, if any. */
  refreshToken(request: FastifyRequest): string | undefined;
  /** True when the request was sent by a page of this service. */
  fromOwnOrigin(request: FastifyRequest): boolean;
}

export function sessionCookies(options: { publicUrl: string; authPath: string }): SessionCookies {
  const publicOrigin = new URL(options.publicUrl).origin;
  const secure = publicOrigin.startsWith('https:') ? '; Secure' : '';
  const write = (reply: FastifyReply, maxAge: number, refreshToken: string, flag: string): void => {
    const existing = reply.getHeader('set-cookie');
    const others = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
    reply.header('set-cookie', [
      ...others,
      `${REFRESH_COOKIE}=${refreshToken}; Path=${options.authPath}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`,
      `${SIGNED_IN_COOKIE}=${flag}; Path=/; Max-Age=${maxAge}; SameSite=Strict${secure}`,
    ]);
  };
  return {
    set: (reply, refreshToken) => write(reply, REFRESH_TOKEN_TTL_SECONDS, refreshToken, '1'),
    clear: (reply) => write(reply, 0, '', ''),
    refreshToken: (request) => cookieValue(request.headers.cookie, REFRESH_COOKIE),
    fromOwnOrigin(request) {
      const origin = request.headers.origin;
      if (!origin) return false;
      if (origin === publicOrigin) return true;
      try {
        // Both through URL, so `localhost:80` and `http://localhost` compare equal.
        const url = new URL(origin);
        return url.host === new URL(`${url.protocol}//${request.headers.host ?? ''}`).host;
      } catch {
        return false;
      }
    },
  };
}

/**
 * The answer of a route that opened or renewed a session: the pair as it is for API clients, or
 * for a browser session the access token alone, the refresh token going into the cookie.
 */
export function sessionAnswer<Pair extends { refresh_token: string }>(
  cookies: SessionCookies,
  reply: FastifyReply,
  pair: Pair,
  useCookie: boolean,
): Pair | (Omit<Pair, 'refresh_token'> & { refresh_token_cookie: true }) {
  if (!useCookie) return pair;
  const { refresh_token, ...rest } = pair;
  cookies.set(reply, refresh_token);
  return { ...rest, refresh_token_cookie: true };
}

/** One cookie's value from a `Cookie` header; empty values count as absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    const value = part.slice(at + 1).trim();
    return value === '' ? undefined : value;
  }
  return undefined;
}
