/**
 * The live stream's rules (ADR 016): stream tokens, and which topics a caller's stream carries.
 * `locations` needs `devices:read`, `events` needs `events:read`.
 */
import type { JwtTokens } from '../auth/jwt-tokens.ts';
import type { Principal } from '../auth/principal.ts';
import type { Scope } from '../auth/scopes.ts';
import { DEVICE_TOKEN_REACH, InsufficientPermissionsError } from '../shared/errors.ts';
import { TOPICS, type Topic } from './stream-messages.ts';

export const STREAM_TOKEN_TTL_SECONDS = 60;

export const TOPIC_SCOPES: Readonly<Record<Topic, Scope>> = {
  locations: 'devices:read',
  events: 'events:read',
};

/** The scopes a stream can use: either one admits a caller to the stream's routes. */
export const STREAM_SCOPES: readonly Scope[] = TOPICS.map((t) => TOPIC_SCOPES[t]);

export async function issueStreamToken(
  tokens: JwtTokens,
  principal: Principal,
): Promise<{ token: string; expires_at: string; expires_in: number }> {
  if (principal.kind === 'device') throw new InsufficientPermissionsError(DEVICE_TOKEN_REACH);
  const { token, expiresAt } = await tokens.signStream({
    workspaceId: principal.workspaceId,
    principal:
      principal.kind === 'user'
        ? { kind: 'user', userId: principal.userId, sessionId: principal.sessionId }
        : { kind: 'api_key', apiKeyId: principal.apiKeyId },
    // Only what a stream can use: the token is no wider than its purpose.
    scopes: STREAM_SCOPES.filter((s) => principal.scopes.has(s)),
    ttlSeconds: STREAM_TOKEN_TTL_SECONDS,
  });
  return { token, expires_at: expiresAt.toISOString(), expires_in: STREAM_TOKEN_TTL_SECONDS };
}

/**
 * The topics of a stream: those asked for (comma-separated, schema-checked), each of which the
 * caller must be allowed to read (403 otherwise); by default every topic the caller may read.
 */
export function streamTopics(principal: Principal, requested: string | undefined): Topic[] {
  if (requested === undefined) return TOPICS.filter((t) => mayRead(principal, t));
  const asked = TOPICS.filter((t) => requested.split(',').includes(t));
  for (const topic of asked) {
    if (!mayRead(principal, topic)) {
      throw new InsufficientPermissionsError(`Topic ${topic} requires scope ${TOPIC_SCOPES[topic]}`);
    }
  }
  return asked;
}

export function mayRead(principal: Principal, topic: Topic): boolean {
  return principal.scopes.has(TOPIC_SCOPES[topic]);
}
