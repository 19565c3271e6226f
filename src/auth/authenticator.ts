/**
 * Turns request credentials into a Principal. JWT sessions and API keys are checked against the
 * database through short-lived caches (see docs/decisions/004-identity.md, "Caches"): hashing happens only
 * at key creation and login, and a revocation on this node takes effect at once (the cache entry is
 * dropped); other nodes see it within CACHE_TTL_MS, or at once over the invalidation bus.
 *
 * An API key acts with its creator's current role in its workspace (contract §2.3): the lookup reads
 * that role with the key, so a demotion (which drops the cached keys) bounds the key at once, and a
 * creator who is no longer a member leaves the key invalid even before its revocation is seen.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { Clock } from '../shared/clock.ts';
import { InvalidAuthTokenError } from '../shared/errors.ts';
import { sha256Hex } from '../shared/random-secrets.ts';
import { SingleFlight } from '../shared/single-flight.ts';
import {
  type ApiKey,
  findKeyForAuthByHash,
  findKeyForAuthById,
  type KeyForAuth,
  touchApiKey,
} from './api-keys.repository.ts';
import { type Invalidation, type InvalidationBus, localInvalidationBus } from './cache-invalidation.ts';
import { type DeviceToken, findDeviceTokenByHash, touchDeviceToken } from './device-tokens.repository.ts';
import type { AccessClaims, JwtTokens } from './jwt-tokens.ts';
import type { Principal } from './principal.ts';
import { expandScopes, type Scope, scopesForRole } from './scopes.ts';
import { hasDeviceTokenShape, looksLikeApiKey, looksLikeDeviceToken } from './secret-tokens.ts';
import { findSessionAccess } from './session-access.repository.ts';

export const CACHE_TTL_MS = 5_000;
/**
 * Device tokens are kept longer (ADR 021): a phone reports every 10–60 s, so with the 5 s of the
 * other credentials every report would read its token again, and on PostgreSQL those reads cost
 * more than the rest of the request (bench:ingest, tracker phase). A revocation or a device's
 * deletion still drops them at once on its node and, over Redis, on the others; only nodes
 * without Redis wait out this lifetime.
 */
export const DEVICE_TOKEN_CACHE_TTL_MS = 60_000;
const CACHE_LIMIT = 50_000;
const LAST_USED_RESOLUTION_MS = 60_000;

type UserPrincipal = Extract<Principal, { kind: 'user' }>;
type ApiKeyPrincipal = Extract<Principal, { kind: 'api_key' }>;
type DevicePrincipal = Extract<Principal, { kind: 'device' }>;

/** What a device token may do: write its device's locations (contract §2.3b). */
const DEVICE_TOKEN_SCOPES: ReadonlySet<Scope> = new Set(['locations:write']);
/** What names a login session: an access token's claims, or a stream token's. */
type SessionClaims = Pick<AccessClaims, 'sid' | 'sub' | 'wid'>;

/** The principal is built once per cache refresh and shared (frozen) by the requests that follow. */
interface SessionState {
  principal: UserPrincipal | null; // null: revoked, unknown, or no longer a member
  checkedAt: number;
}

interface ProfileState {
  value: unknown;
  checkedAt: number;
}

interface DeviceTokenState {
  principal: DevicePrincipal | null; // null: unknown, revoked or its device deleted
  checkedAt: number;
}

interface ApiKeyState {
  key: ApiKey | null;
  principal: ApiKeyPrincipal | null;
  checkedAt: number;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer …` header; undefined for any other form. */
export function bearerToken(header: string): string | undefined {
  return BEARER.exec(header)?.[1];
}

export interface Credentials {
  authorization?: string | undefined;
  apiKey?: string | undefined;
}

export class Authenticator {
  private readonly sessions = new Map<string, SessionState>();
  private readonly apiKeys = new Map<string, ApiKeyState>();
  /** API keys by workspace and id, for stream tokens (which name the key, not its secret). */
  private readonly apiKeysById = new Map<string, ApiKeyState>();
  private readonly deviceTokens = new Map<string, DeviceTokenState>();
  private readonly lastTouched = new Map<string, number>();
  private readonly profiles = new Map<string, ProfileState>();
  // Concurrent misses of one entry share one database read (see single-flight.ts).
  private readonly sessionLoads = new SingleFlight<string, UserPrincipal | null>();
  private readonly apiKeyLoads = new SingleFlight<string, ApiKeyState>();
  private readonly apiKeyIdLoads = new SingleFlight<string, ApiKeyState>();
  private readonly deviceTokenLoads = new SingleFlight<string, DeviceTokenState>();
  private readonly profileLoads = new SingleFlight<string, unknown>();
  /**
   * Bumped by every invalidation. A load that began before one does not store its answer: it may
   * have read the row before the change committed, and would otherwise be served for a whole TTL.
   */
  private generation = 0;
  private readonly db: Db;
  private readonly tokens: JwtTokens;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly bus: InvalidationBus;

  constructor(deps: { db: Db; tokens: JwtTokens; clock: Clock; logger: Logger; bus?: InvalidationBus }) {
    this.db = deps.db;
    this.tokens = deps.tokens;
    this.clock = deps.clock;
    this.logger = deps.logger;
    this.bus = deps.bus ?? localInvalidationBus();
    this.bus.subscribe((message) => this.apply(message));
  }

  /** Drops local cache entries; `forget*` below also tell the other nodes. */
  private apply(message: Invalidation): void {
    this.generation += 1;
    switch (message.kind) {
      case 'session':
        this.sessions.delete(message.id);
        // Loads are keyed by session, user and workspace; dropping them all is simplest and rare.
        this.sessionLoads.clear();
        break;
      case 'user':
        this.profiles.delete(message.id);
        this.profileLoads.forget(message.id);
        break;
      case 'all_sessions':
        this.sessions.clear();
        this.profiles.clear();
        this.sessionLoads.clear();
        this.profileLoads.clear();
        break;
      case 'device':
        // A scan, not a clear: the 60 s entries of every other phone stay (ADR 021).
        for (const [token, state] of this.deviceTokens) {
          if (state.principal?.deviceId === message.id) this.deviceTokens.delete(token);
        }
        this.deviceTokenLoads.clear();
        break;
      case 'device_tokens':
        this.deviceTokens.clear();
        this.deviceTokenLoads.clear();
        break;
      case 'api_keys':
        this.apiKeys.clear();
        this.apiKeyLoads.clear();
        this.apiKeysById.clear();
        this.apiKeyIdLoads.clear();
        break;
    }
  }

  private forget(message: Invalidation): void {
    this.apply(message);
    this.bus.publish(message);
  }

  /** undefined when the request carries no credentials at all; throws for bad ones. */
  async authenticate(credentials: Credentials): Promise<Principal | undefined> {
    if (credentials.apiKey !== undefined) return this.authenticateSecret(credentials.apiKey);
    const header = credentials.authorization;
    if (header === undefined) return undefined;
    const token = bearerToken(header);
    if (!token) throw new InvalidAuthTokenError();
    if (looksLikeApiKey(token) || looksLikeDeviceToken(token)) return this.authenticateSecret(token);
    return this.authenticateJwt(token);
  }

  /**
   * A credential that is not a JWT, however it was sent (a header, or a tracker route's URL or
   * Basic password, auth/tracker-credentials.ts): an API key or a device token.
   */
  async authenticateSecret(secret: string): Promise<Principal> {
    if (looksLikeDeviceToken(secret)) return this.authenticateDeviceToken(secret);
    if (looksLikeApiKey(secret)) return this.authenticateApiKey(secret);
    // Not a credential of ours at all (a Basic password typed for another service): no lookup.
    throw new InvalidAuthTokenError('Invalid API key');
  }

  private async authenticateDeviceToken(token: string): Promise<Principal> {
    if (!hasDeviceTokenShape(token)) throw new InvalidAuthTokenError('Invalid device token');
    const now = this.clock.now();
    const cached = this.deviceTokens.get(token);
    const state =
      cached && now.getTime() - cached.checkedAt < DEVICE_TOKEN_CACHE_TTL_MS
        ? cached
        : await this.deviceTokenLoads.run(token, async () => {
            const generation = this.generation;
            const found = await findDeviceTokenByHash(this.db, sha256Hex(token));
            const loaded: DeviceTokenState = {
              principal: found ? devicePrincipal(found) : null,
              checkedAt: now.getTime(),
            };
            if (generation !== this.generation) return loaded;
            if (this.deviceTokens.size >= CACHE_LIMIT) this.deviceTokens.clear();
            this.deviceTokens.set(token, loaded);
            return loaded;
          });
    if (!state.principal) throw new InvalidAuthTokenError('Invalid device token');
    this.recordUse(state.principal.deviceTokenId, now, touchDeviceToken);
    return state.principal;
  }

  private async authenticateJwt(token: string): Promise<Principal> {
    return this.sessionPrincipal(await this.tokens.verifyAccess(token));
  }

  /**
   * A stream token (ADR 016): valid while its login session or API key is, with the scopes it
   * carries as far as the session's role or the key still grants them.
   */
  async authenticateStreamToken(token: string): Promise<Principal> {
    const claims = await this.tokens.verifyStream(token);
    const principal =
      claims.pk === 'user'
        ? await this.sessionPrincipal({ sid: claims.sid ?? '', sub: claims.sub, wid: claims.wid })
        : await this.apiKeyPrincipalById(claims.wid, claims.sub);
    const granted = new Set(claims.scp);
    return Object.freeze({
      ...principal,
      scopes: new Set([...principal.scopes].filter((s) => granted.has(s))),
    });
  }

  /**
   * The principal as its login session or API key stands now (a long-lived stream asks again from
   * time to time): throws InvalidAuthTokenError once the session is revoked or the key revoked or
   * expired. Read through the same caches as every request.
   */
  async current(principal: Principal): Promise<Principal> {
    switch (principal.kind) {
      case 'user':
        return this.sessionPrincipal({
          sid: principal.sessionId,
          sub: principal.userId,
          wid: principal.workspaceId,
        });
      case 'api_key':
        return this.apiKeyPrincipalById(principal.workspaceId, principal.apiKeyId);
      case 'device':
        // No stream or other long-lived answer is open to a device token.
        throw new InvalidAuthTokenError('Invalid device token');
    }
  }

  private async sessionPrincipal(claims: SessionClaims): Promise<UserPrincipal> {
    const now = this.clock.now().getTime();
    const principal =
      this.cachedSession(claims, now) ??
      // Keyed by everything the load checks, so a shared answer is the answer for these claims.
      (await this.sessionLoads.run(`${claims.sid} ${claims.sub} ${claims.wid}`, () =>
        this.loadSession(claims, now),
      ));
    if (principal === null) throw new InvalidAuthTokenError();
    return principal;
  }

  /** undefined when the session is not cached (or the entry is stale); throws when it is known to be invalid. */
  private cachedSession(claims: SessionClaims, now: number): UserPrincipal | undefined {
    const cached = this.sessions.get(claims.sid);
    if (!cached || now - cached.checkedAt >= CACHE_TTL_MS) return undefined;
    const principal = cached.principal;
    // A session belongs to one user and workspace; a token naming others is not valid for it.
    if (principal === null || principal.userId !== claims.sub || principal.workspaceId !== claims.wid)
      throw new InvalidAuthTokenError();
    return principal;
  }

  private async loadSession(claims: SessionClaims, now: number): Promise<UserPrincipal | null> {
    const { sid: sessionId, sub: userId, wid: workspaceId } = claims;
    const generation = this.generation;
    const access = await findSessionAccess(this.db, sessionId);
    // A session belongs to one user and workspace; a token naming others is not valid for it.
    const valid = access && !access.revoked && access.userId === userId && access.workspaceId === workspaceId;
    const role = valid ? access.role : null;
    const principal: UserPrincipal | null =
      role === null
        ? null
        : Object.freeze({ kind: 'user', userId, workspaceId, role, sessionId, scopes: scopesForRole(role) });
    if (generation !== this.generation) return principal;
    if (this.sessions.size >= CACHE_LIMIT) this.sessions.clear();
    this.sessions.set(sessionId, { principal, checkedAt: now });
    return principal;
  }

  private async authenticateApiKey(key: string): Promise<Principal> {
    const now = this.clock.now();
    // Keyed by the key as presented, like the JWT cache by token, so the SHA-256 the database is
    // searched by is computed only on a miss. Entries live CACHE_TTL_MS and the process holds the
    // presented key for the request anyway.
    const cached = this.apiKeys.get(key);
    const state =
      cached && now.getTime() - cached.checkedAt < CACHE_TTL_MS
        ? cached
        : await this.apiKeyLoads.run(key, () => this.loadApiKey(key, now));
    return this.acceptApiKey(state, now);
  }

  private async loadApiKey(presented: string, now: Date): Promise<ApiKeyState> {
    const generation = this.generation;
    const state = apiKeyState(await findKeyForAuthByHash(this.db, sha256Hex(presented)), now);
    if (generation !== this.generation) return state;
    if (this.apiKeys.size >= CACHE_LIMIT) this.apiKeys.clear();
    this.apiKeys.set(presented, state);
    return state;
  }

  private async apiKeyPrincipalById(workspaceId: string, id: string): Promise<Principal> {
    const now = this.clock.now();
    const key = `${workspaceId} ${id}`;
    const cached = this.apiKeysById.get(key);
    const state =
      cached && now.getTime() - cached.checkedAt < CACHE_TTL_MS
        ? cached
        : await this.apiKeyIdLoads.run(key, async () => {
            const generation = this.generation;
            const loaded = apiKeyState(await findKeyForAuthById(this.db, workspaceId, id), now);
            if (generation !== this.generation) return loaded;
            if (this.apiKeysById.size >= CACHE_LIMIT) this.apiKeysById.clear();
            this.apiKeysById.set(key, loaded);
            return loaded;
          });
    return this.acceptApiKey(state, now);
  }

  private acceptApiKey(state: ApiKeyState, now: Date): Principal {
    const { key: apiKey, principal } = state;
    if (!apiKey || !principal) throw new InvalidAuthTokenError('Invalid API key');
    if (apiKey.expiresAt && apiKey.expiresAt.getTime() <= now.getTime())
      throw new InvalidAuthTokenError('API key has expired');
    this.recordUse(apiKey.id, now, touchApiKey);
    return principal;
  }

  /** `last_used_at` is written at most once a minute per key or token, off the request path. */
  private recordUse(id: string, now: Date, touch: (db: Db, id: string, at: Date) => Promise<void>): void {
    const last = this.lastTouched.get(id);
    if (last !== undefined && now.getTime() - last < LAST_USED_RESOLUTION_MS) return;
    if (this.lastTouched.size >= CACHE_LIMIT) this.lastTouched.clear();
    this.lastTouched.set(id, now.getTime());
    touch(this.db, id, now).catch((error: unknown) =>
      this.logger.warn({ err: error, credentialId: id }, 'could not record credential use'),
    );
  }

  /**
   * A user's profile and memberships as `/auth/me` shows them, read through the same short cache as
   * sessions (a signed-in client polls it often). Every change to them clears the entry on this node.
   */
  async profile<T>(userId: string, load: () => Promise<T>): Promise<T> {
    const now = this.clock.now().getTime();
    const cached = this.profiles.get(userId);
    if (cached && now - cached.checkedAt < CACHE_TTL_MS) return cached.value as T;
    return (await this.profileLoads.run(userId, async () => {
      const generation = this.generation;
      const value = await load();
      if (generation !== this.generation) return value;
      if (this.profiles.size >= CACHE_LIMIT) this.profiles.clear();
      this.profiles.set(userId, { value, checkedAt: now });
      return value;
    })) as T;
  }

  /** After a change to one user's profile or memberships. */
  forgetUser(userId: string): void {
    this.forget({ kind: 'user', id: userId });
  }

  forgetSession(sessionId: string): void {
    this.forget({ kind: 'session', id: sessionId });
  }

  /** After membership, role or workspace changes, sessions and profiles must be re-read. */
  forgetAllSessions(): void {
    this.forget({ kind: 'all_sessions' });
  }

  /** After a device's token is revoked or the device deleted (every node). */
  forgetDevice(deviceId: string): void {
    this.forget({ kind: 'device', id: deviceId });
  }

  /** After a key is revoked, or a role or membership that bounds keys changes (every node). */
  forgetApiKeys(): void {
    this.forget({ kind: 'api_keys' });
  }
}

/**
 * A key made before creators were recorded for keys minted by other keys has no known creator. It
 * keeps working, with a member's reach: nobody can vouch for more (ADR 004).
 */
const ROLE_OF_KEY_WITHOUT_CREATOR = 'member';

function apiKeyState(found: KeyForAuth | undefined, now: Date): ApiKeyState {
  const key = found && found.key.revokedAt === null ? found.key : null;
  return { key, principal: found && key ? apiKeyPrincipal(found) : null, checkedAt: now.getTime() };
}

/** null when the key's creator is no longer a member of its workspace: the key ended with that. */
function apiKeyPrincipal({ key, creatorRole }: KeyForAuth): ApiKeyPrincipal | null {
  const role = key.createdBy === null ? ROLE_OF_KEY_WITHOUT_CREATOR : creatorRole;
  if (role === null) return null;
  const allowed: ReadonlySet<Scope> = scopesForRole(role);
  return Object.freeze({
    kind: 'api_key',
    apiKeyId: key.id,
    workspaceId: key.workspaceId,
    name: key.name,
    prefix: key.prefix,
    createdBy: key.createdBy,
    role,
    grantedScopes: key.scopes,
    scopes: new Set([...expandScopes(key.scopes)].filter((scope) => allowed.has(scope))),
  });
}

function devicePrincipal(token: DeviceToken): DevicePrincipal {
  return Object.freeze({
    kind: 'device',
    deviceTokenId: token.id,
    deviceId: token.deviceId,
    workspaceId: token.workspaceId,
    prefix: token.prefix,
    scopes: DEVICE_TOKEN_SCOPES,
  });
}
