/**
 * Access and refresh tokens (contract §2.2): HS256 JWTs, algorithm pinned on verification (so
 * `alg: none` and RS/HS confusion are refused), `typ` claim checked so a refresh token never works
 * as an access token. Verified access tokens are cached until expiry: clients reuse one token for
 * many requests, and the HMAC plus JSON parsing is the costliest part of authenticating them.
 */
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../shared/clock.ts';
import { InvalidAuthTokenError, TokenExpiredError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { WorkspaceRole } from '../workspaces/workspaces.tables.ts';

export const REFRESH_TOKEN_TTL_SECONDS = 7 * 24 * 3600;
const ALGORITHM = 'HS256';
const CACHE_LIMIT = 10_000;

export interface AccessClaims {
  sub: string;
  wid: string;
  role: WorkspaceRole;
  sid: string;
  typ: 'access';
  iat: number;
  exp: number;
}

export interface RefreshClaims {
  sub: string;
  wid: string;
  sid: string;
  jti: string;
  typ: 'refresh';
  iat: number;
  exp: number;
}

/**
 * A stream token (ADR 016): EventSource cannot send headers, so GET /stream takes this short-lived
 * token in its query instead. It names the workspace, the principal (a login session or an API key,
 * both checked again when the stream opens) and the scopes the stream may use.
 */
export interface StreamClaims {
  typ: 'stream';
  wid: string;
  /** `user`: `sub` is the user and `sid` the login session; `api_key`: `sub` is the key's id. */
  pk: 'user' | 'api_key';
  sub: string;
  sid?: string;
  scp: string[];
  iat: number;
  exp: number;
}

export class JwtTokens {
  private readonly key: Uint8Array;
  private readonly clock: Clock;
  private readonly verified = new Map<string, AccessClaims>();

  constructor(secret: string, clock: Clock) {
    this.key = new TextEncoder().encode(secret);
    this.clock = clock;
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now().getTime() / 1000);
  }

  async signAccess(input: {
    userId: string;
    workspaceId: string;
    role: WorkspaceRole;
    sessionId: string;
    ttlSeconds: number;
  }): Promise<string> {
    const iat = this.nowSeconds();
    return new SignJWT({ wid: input.workspaceId, role: input.role, sid: input.sessionId, typ: 'access' })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(input.userId)
      .setJti(uuidv7())
      .setIssuedAt(iat)
      .setExpirationTime(iat + input.ttlSeconds)
      .sign(this.key);
  }

  async signRefresh(input: {
    userId: string;
    workspaceId: string;
    sessionId: string;
    jti: string;
  }): Promise<{ token: string; expiresAt: Date }> {
    const iat = this.nowSeconds();
    const exp = iat + REFRESH_TOKEN_TTL_SECONDS;
    const token = await new SignJWT({ wid: input.workspaceId, sid: input.sessionId, typ: 'refresh' })
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(input.userId)
      .setJti(input.jti)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  async signStream(input: {
    workspaceId: string;
    principal: { kind: 'user'; userId: string; sessionId: string } | { kind: 'api_key'; apiKeyId: string };
    scopes: readonly string[];
    ttlSeconds: number;
  }): Promise<{ token: string; expiresAt: Date }> {
    const iat = this.nowSeconds();
    const exp = iat + input.ttlSeconds;
    const { principal } = input;
    const claims =
      principal.kind === 'user'
        ? { wid: input.workspaceId, pk: 'user', sid: principal.sessionId, scp: input.scopes, typ: 'stream' }
        : { wid: input.workspaceId, pk: 'api_key', scp: input.scopes, typ: 'stream' };
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(principal.kind === 'user' ? principal.userId : principal.apiKeyId)
      .setJti(uuidv7())
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /** Throws TokenExpiredError for an expired but otherwise valid stream token, InvalidAuthTokenError otherwise. */
  async verifyStream(token: string): Promise<StreamClaims> {
    const claims = await this.verify(token, 'stream', true);
    const { wid, pk, sid, scp, sub } = claims;
    const scopesOk = Array.isArray(scp) && scp.every((s) => typeof s === 'string');
    const principalOk = pk === 'api_key' || (pk === 'user' && typeof sid === 'string');
    if (typeof wid !== 'string' || typeof sub !== 'string' || !scopesOk || !principalOk) {
      throw new InvalidAuthTokenError();
    }
    return claims as unknown as StreamClaims;
  }

  /**
   * A token verified earlier, without awaiting anything: undefined when it is not in the cache;
   * throws TokenExpiredError once it has expired.
   */
  cachedAccess(token: string, nowMs: number): AccessClaims | undefined {
    const cached = this.verified.get(token);
    if (cached && cached.exp <= Math.floor(nowMs / 1000)) throw new TokenExpiredError();
    return cached;
  }

  /** Throws TokenExpiredError for an expired but otherwise valid access token, InvalidAuthTokenError otherwise. */
  async verifyAccess(token: string): Promise<AccessClaims> {
    const cached = this.cachedAccess(token, this.clock.now().getTime());
    if (cached) return cached;
    const claims = await this.verify(token, 'access', true);
    if (typeof claims.role !== 'string' || typeof claims.sid !== 'string' || typeof claims.wid !== 'string') {
      throw new InvalidAuthTokenError();
    }
    const access = claims as unknown as AccessClaims;
    if (this.verified.size >= CACHE_LIMIT) this.verified.clear();
    this.verified.set(token, access);
    return access;
  }

  async verifyRefresh(token: string): Promise<RefreshClaims> {
    const claims = await this.verify(token, 'refresh', false);
    if (typeof claims.jti !== 'string' || typeof claims.sid !== 'string' || typeof claims.wid !== 'string') {
      throw new InvalidAuthTokenError();
    }
    return claims as unknown as RefreshClaims;
  }

  private async verify(
    token: string,
    typ: 'access' | 'refresh' | 'stream',
    reportExpiry: boolean,
  ): Promise<Record<string, unknown>> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: [ALGORITHM],
        currentDate: this.clock.now(),
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      if (payload.typ !== typ) throw new InvalidAuthTokenError();
      return payload as Record<string, unknown>;
    } catch (error) {
      if (error instanceof errors.JWTExpired && reportExpiry) throw new TokenExpiredError();
      throw new InvalidAuthTokenError();
    }
  }
}
