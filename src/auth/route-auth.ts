/**
 * Every API route states who may call it in `config.auth`, next to its schema:
 *   'public'                         no credentials
 *   { scope: 'geofences:write' }     a JWT user or an API key holding that scope
 *   { scope, via: 'user' }           only a signed-in user (session routes such as /auth/me)
 *   { scope, via: 'api_key' }        only an API key (/auth/test-api-key)
 *   { scope, adminOnly: true }       owner or admin (a JWT user's role; an API key's creator's now)
 *   { scope: null, anyScope: [a, b] } any one of these scopes will do
 *   { scope, alsoScopes: [b] }       `scope` and each of these
 *   { …, streamToken: true }         a `?token=` stream token is taken too (GET /stream, ADR 016)
 *   { …, deviceToken: true }         a device token is taken too, for its own device (contract §2.3b);
 *                                    every other route answers a device token 403
 *   { …, roleFromPath: true }        /workspaces/{workspace_id}: a JWT user acts with its role in THAT
 *                                    workspace (contract §2.4), which the service checks; `scope` is
 *                                    checked here for API keys only
 * The same declaration feeds the OpenAPI document (security and `x-required-scope`,
 * http/route-auth-declaration.ts), so the document, the enforcement and the scope-matrix test cannot
 * drift apart. A route under /api/v1 without a declaration fails at start-up rather than defaulting
 * to open.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { RouteAuthDeclaration } from '../http/route-auth-declaration.ts';
import { type ApiKeyLimit, apiKeyLimitExceeded, rateLimitHeaders } from '../limits/api-key-limit.ts';
import { DEVICE_TOKEN_REACH, InsufficientPermissionsError, NotAuthenticatedError } from '../shared/errors.ts';
import type { Authenticator } from './authenticator.ts';
import type { Principal } from './principal.ts';
import type { Scope } from './scopes.ts';
import { trackerCredential } from './tracker-credentials.ts';

/** A route's declaration, held to the scopes there are. */
export type RouteAuth = RouteAuthDeclaration<Scope>;

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

export function registerRouteAuth(
  app: FastifyInstance,
  authenticator: Authenticator,
  protectedPrefix: string,
  /** The per-key hourly limit (contract §7), applied once an API key is recognised. */
  apiKeyLimit?: ApiKeyLimit,
): void {
  app.decorateRequest('principal', undefined);

  app.addHook('onRoute', (route) => {
    const auth = (route.config as { auth?: RouteAuth } | undefined)?.auth;
    if (route.url.startsWith(protectedPrefix) && auth === undefined) {
      throw new Error(`Route ${String(route.method)} ${route.url} must declare config.auth`);
    }
    // The check is a hook of the protected route itself, its declaration bound in: public routes
    // (probes, docs) run no auth hook at all. Route-level hooks run after the application's own
    // onRequest hooks, as a global one would.
    if (auth === undefined || auth === 'public') return;
    const check: onRequestAsyncHookHandler = async (request, reply) => authorize(request, reply, auth);
    const existing = route.onRequest;
    route.onRequest =
      existing === undefined ? [check] : [...(Array.isArray(existing) ? existing : [existing]), check];
  });

  /** Authenticates, counts and checks the request; throws the 401/403/429 error. */
  async function authorize(
    request: FastifyRequest,
    reply: FastifyReply,
    auth: Exclude<RouteAuth, 'public'>,
  ): Promise<void> {
    // A stream token, where the route takes one, is the request's credential when it is given.
    const streamToken = auth.streamToken ? queryToken(request) : undefined;
    const principal =
      streamToken !== undefined
        ? await authenticator.authenticateStreamToken(streamToken)
        : auth.urlCredential
          ? await trackerPrincipal(request)
          : await authenticator.authenticate({
              authorization: request.headers.authorization,
              apiKey: headerValue(request.headers['x-api-key']),
            });
    if (!principal) throw new NotAuthenticatedError();
    // Every request of a recognised key counts, whatever its scopes allow (so do GitHub's); JWT
    // requests are not counted. The headers go on every answer, the 403s and the 429 included.
    // Device tokens are limited per token like keys (contract §2.3b).
    if (principal.kind !== 'user' && apiKeyLimit) {
      const decision = await apiKeyLimit.check({
        apiKeyId: principal.kind === 'api_key' ? principal.apiKeyId : principal.deviceTokenId,
        workspaceId: principal.workspaceId,
      });
      if (decision) {
        reply.headers(rateLimitHeaders(decision));
        if (!decision.allowed) throw apiKeyLimitExceeded(decision);
      }
    }
    permit(request, auth, principal);
  }

  /** A tracker route's caller (auth/tracker-credentials.ts): headers, Basic or `?token=`. */
  async function trackerPrincipal(request: FastifyRequest): Promise<Principal | undefined> {
    const found = trackerCredential(request);
    if (found.kind === 'headers') return authenticator.authenticate(found.credentials);
    if (found.kind === 'secret') return authenticator.authenticateSecret(found.secret);
    return undefined;
  }

  /** The route's declaration against the caller: 401 for the wrong kind, 403 without scope/role. */
  function permit(request: FastifyRequest, auth: Exclude<RouteAuth, 'public'>, principal: Principal): void {
    if (principal.kind === 'device' && !auth.deviceToken) {
      throw new InsufficientPermissionsError(DEVICE_TOKEN_REACH);
    }
    const via = auth.via ?? 'any';
    if (via === 'user' && principal.kind !== 'user')
      throw new NotAuthenticatedError('This endpoint needs a user access token (JWT)');
    if (via === 'api_key' && principal.kind !== 'api_key')
      throw new NotAuthenticatedError('This endpoint needs an API key');
    // A token's scopes are those of the role in the workspace it was issued for; on a roleFromPath
    // route the user's role in the path's workspace decides instead (the service checks it).
    const scopeApplies = !(auth.roleFromPath && principal.kind === 'user');
    if (scopeApplies && auth.scope !== null && !principal.scopes.has(auth.scope)) {
      throw new InsufficientPermissionsError(`This action requires scope ${auth.scope}`);
    }
    const missing = auth.alsoScopes?.find((scope) => !principal.scopes.has(scope));
    if (missing !== undefined)
      throw new InsufficientPermissionsError(`This action requires scope ${missing} too`);
    if (auth.anyScope && !auth.anyScope.some((scope) => principal.scopes.has(scope))) {
      throw new InsufficientPermissionsError(`This action requires scope ${auth.anyScope.join(' or ')}`);
    }
    // A key acts with its creator's current role (contract §2.3), so it is held to the same rule.
    if (auth.adminOnly && (principal.kind === 'device' || principal.role === 'member')) {
      throw new InsufficientPermissionsError('This action requires the owner or admin role');
    }
    request.principal = principal;
  }
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function queryToken(request: FastifyRequest): string | undefined {
  const token = (request.query as Record<string, unknown> | undefined)?.token;
  return typeof token === 'string' ? token : undefined;
}

/** The authenticated caller of a protected route (the onRequest hook guarantees one). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new NotAuthenticatedError();
  return request.principal;
}

/** The signed-in user of a `via: 'user'` route. */
export function userOf(request: FastifyRequest): Extract<Principal, { kind: 'user' }> {
  const principal = principalOf(request);
  if (principal.kind !== 'user')
    throw new NotAuthenticatedError('This endpoint needs a user access token (JWT)');
  return principal;
}
