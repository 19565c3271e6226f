/**
 * What a route declares of its callers in `config.auth`, next to its schema (the forms are listed
 * in auth/route-auth.ts, whose hook enforces them). The OpenAPI document states the same
 * declaration (security, `x-required-scope`, the 401/403/429 it can answer), so the document, the
 * enforcement and the scope-matrix test cannot drift apart. The scope names are auth/'s: routes
 * are checked against them through the declaration merged into Fastify's route config there.
 */
export type RouteAuthDeclaration<Scope extends string = string> =
  | 'public'
  | {
      scope: Scope | null;
      via?: 'any' | 'user' | 'api_key';
      adminOnly?: boolean;
      anyScope?: readonly Scope[];
      /** Scopes needed besides `scope` (all of them). */
      alsoScopes?: readonly Scope[];
      streamToken?: boolean;
      /** A device token (contract §2.3b) may call it, for its own device only. */
      deviceToken?: boolean;
      /** The credential may also come as HTTP Basic or `?token=` (the tracker routes, contract §4.6). */
      urlCredential?: boolean;
      /** A JWT user's role comes from its membership of the path's workspace, not its token. */
      roleFromPath?: boolean;
    };

/** OpenAPI security requirements and extensions derived from a route's declaration. */
export function openApiAuthFields(auth: RouteAuthDeclaration | undefined): Record<string, unknown> {
  if (auth === undefined || auth === 'public') return { security: [] };
  const via = auth.via ?? 'any';
  const security: Array<Record<string, string[]>> =
    via === 'user'
      ? [{ bearerJwt: [] }]
      : via === 'api_key'
        ? [{ bearerApiKey: [] }, { apiKeyHeader: [] }]
        : [{ bearerJwt: [] }, { bearerApiKey: [] }, { apiKeyHeader: [] }];
  if (auth.streamToken) security.push({ streamToken: [] });
  if (auth.deviceToken) security.push({ deviceToken: [] });
  if (auth.urlCredential) security.push({ trackerBasic: [] }, { trackerUrlToken: [] });
  return {
    security,
    'x-required-scope': auth.scope,
    ...(auth.anyScope ? { 'x-required-scope-any-of': [...auth.anyScope] } : {}),
    ...(auth.alsoScopes ? { 'x-required-scope-also': [...auth.alsoScopes] } : {}),
    'x-auth-via': via,
    ...(auth.deviceToken ? { 'x-device-token': true } : {}),
    ...(auth.adminOnly ? { 'x-required-role': 'owner or admin (JWT users)' } : {}),
  };
}
