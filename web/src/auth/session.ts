/**
 * The signed-in session: the token pair lives in this module's memory only (never in storage a
 * script injected into the page could read later), so a reload signs out. The access token is
 * renewed before it expires ("silent refresh"); refresh tokens rotate (contract §2.2), so every
 * refresh stores the new pair, and concurrent callers share one refresh.
 */
import type { components } from '../api/schema.ts';

export type TokenPair = components['schemas']['TokenPair'];
type Listener = (signedIn: boolean) => void;

let tokens: TokenPair | null = null;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let inFlight: Promise<boolean> | null = null;
const listeners = new Set<Listener>();

/** Renew when 80 % of the lifetime has passed (at least 5 s from now). */
const REFRESH_AT = 0.8;

export function accessToken(): string | null {
  return tokens?.access_token ?? null;
}

export function refreshToken(): string | null {
  return tokens?.refresh_token ?? null;
}

export function isSignedIn(): boolean {
  return tokens !== null;
}

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function startSession(pair: TokenPair): void {
  const was = tokens !== null;
  tokens = pair;
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void refreshNow(), Math.max(5, pair.expires_in * REFRESH_AT) * 1000);
  if (!was) for (const l of listeners) l(true);
}

export function endSession(): void {
  const was = tokens !== null;
  tokens = null;
  clearTimeout(refreshTimer);
  if (was) for (const l of listeners) l(false);
}

/**
 * Exchanges the refresh token for a new pair; false (and signed out) when the session is over.
 * Uses plain fetch: the API client's middleware calls this, so it must not go through itself.
 */
export function refreshNow(): Promise<boolean> {
  if (inFlight) return inFlight;
  const current = tokens?.refresh_token;
  if (!current) return Promise.resolve(false);
  inFlight = (async () => {
    try {
      const response = await fetch('/api/v1/auth/refresh', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: current }),
      });
      if (!response.ok) {
        // 429 is a pause, not the end of the session; anything else (401: reused or expired) is.
        if (response.status !== 429) endSession();
        return false;
      }
      startSession((await response.json()) as TokenPair);
      return true;
    } catch {
      return false;
    } finally {
      inFlight = null;
    }
  })();
  return inFlight;
}
