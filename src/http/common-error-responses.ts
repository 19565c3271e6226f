/**
 * The error statuses every route can answer whatever its handler does, derived from what the route
 * declares (method, body, parameters, `config.auth`, body limit) so the OpenAPI document lists
 * them for every operation (contract §1, §7). The single place deciding them: a route declares only
 * the errors of its own logic (a 409, a 400 business rule, a quota 403).
 */
import type { RouteAuthDeclaration } from './route-auth-declaration.ts';

export interface RouteFacts {
  /** The route has a body schema: it parses JSON. */
  hasBody: boolean;
  /** The route has path parameters: the resource they name may not exist. */
  hasPathParams: boolean;
  hasQuery: boolean;
  auth: RouteAuthDeclaration | undefined;
  /** The body limit of the route in bytes (its own or the application's). */
  bodyLimit: number;
  /** API keys are counted against their hourly budget (API_KEY_RATE_LIMITS). */
  apiKeyRateLimited: boolean;
}

/** status → why the route can answer it. */
export function commonErrorResponses(facts: RouteFacts): Map<number, string> {
  const out = new Map<number, string>();
  const { auth } = facts;
  if (facts.hasBody) {
    out.set(400, 'Malformed JSON body (`VALIDATION_ERROR`)');
  }
  if (auth !== undefined && auth !== 'public') {
    out.set(401, credentialsCause(auth.via ?? 'any', auth.streamToken === true));
    const forbidden = [
      auth.scope !== null ? `the credentials lack the scope \`${auth.scope}\`` : undefined,
      auth.anyScope
        ? `the credentials hold none of the scopes ${auth.anyScope.map((s) => `\`${s}\``).join(', ')}`
        : undefined,
      auth.adminOnly ? 'the user is a member (owner or admin required)' : undefined,
    ].filter((cause) => cause !== undefined);
    if (forbidden.length > 0) out.set(403, capitalise(forbidden.join('; ')));
  }
  if (facts.hasPathParams) out.set(404, 'Not found (or not in your workspace)');
  if (facts.hasBody) {
    out.set(413, `Request body larger than ${formatBytes(facts.bodyLimit)}`);
    out.set(415, 'Content-Type other than application/json');
  }
  if (facts.hasBody || facts.hasQuery || facts.hasPathParams) {
    out.set(422, 'Request failed schema validation; `detail` is an array of {type, loc, msg}');
  }
  if (facts.apiKeyRateLimited && auth !== undefined && auth !== 'public' && auth.via !== 'user') {
    out.set(
      429,
      "API key over its plan's hourly request budget (`RATE_LIMIT_EXCEEDED`, contract §7); see Retry-After",
    );
  }
  out.set(500, 'Unexpected server failure');
  // Contract §0: any route while the server shuts down (src/http/graceful-close.ts); those that
  // read or write data also while the database is unreachable (src/db/availability.ts).
  out.set(
    503,
    auth === 'public' && !facts.hasBody && !facts.hasPathParams
      ? 'The server is shutting down (`SERVICE_UNAVAILABLE`); see Retry-After'
      : 'The database is unreachable, or the server is shutting down (`SERVICE_UNAVAILABLE`); see Retry-After',
  );
  return out;
}

function credentialsCause(via: 'any' | 'user' | 'api_key', streamToken: boolean): string {
  const wanted = via === 'user' ? 'a user access token' : via === 'api_key' ? 'an API key' : 'credentials';
  return `Missing, invalid or expired ${wanted}${streamToken ? ' or stream token' : ''}`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function formatBytes(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : `${bytes} bytes`;
}
