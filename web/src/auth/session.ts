/**
 * The signed-in session (contract §2.2, browser sessions). The access token lives in this module's
 * memory only; the refresh token lives in the HttpOnly `gf_refresh` cookie, which page script
 * cannot read, so a script injected into the page cannot carry the session away, yet a reload or a
 * new tab signs in again from the cookie. The readable `gf_session` cookie only says one was set,
 * so a page without a session does not ask.
 *
 * The access token is renewed before it expires ("silent refresh"). Refresh tokens rotate and one
 * presented twice ends the session, so refreshes are serialised across tabs with the Web Locks API:
 * every tab shares the cookie, and two tabs sending the same one at once would sign both out. Where
 * the page is not a secure context (plain http on a LAN address) Web Locks do not exist and tabs
 * refreshing in the same instant may end the session; each tab's refresh still runs once at a time.
 */
import type { components } from '../api/schema.ts';

/** What a session needs of a sign-in's answer (a browser session's answer has nothing more). */
export type AccessToken = Pick<components['schemas']['BrowserTokens'], 'access_token' | 'expires_in'>;
type Listener = (signedIn: boolean) => void;

let access: AccessToken | null = null;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let inFlight: Promise<boolean> | null = null;
const listeners = new Set<Listener>();
/** Tells the other tabs of this browser when this one signs out. */
const tabs = typeof BroadcastChannel === 'function' ? new BroadcastChannel('geofence-session') : null;
tabs?.addEventListener('message', (event: MessageEvent) => {
  if (event.data === 'signed-out') endSession({ tellOtherTabs: false });
});

/** Renew when 80 % of the lifetime has passed (at least 5 s from now). */
const REFRESH_AT = 0.8;

export function accessToken(): string | null {
  return access?.access_token ?? null;
}

export function isSignedIn(): boolean {
  return access !== null;
}

export function onSessionChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function startSession(tokens: AccessToken): void {
  const was = access !== null;
  access = tokens;
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void refreshNow(), Math.max(5, tokens.expires_in * REFRESH_AT) * 1000);
  if (!was) for (const l of listeners) l(true);
}

export function endSession(options: { tellOtherTabs?: boolean } = {}): void {
  const was = access !== null;
  access = null;
  clearTimeout(refreshTimer);
  if (options.tellOtherTabs !== false) tabs?.postMessage('signed-out');
  if (was) for (const l of listeners) l(false);
}

/** True when the server set a session cookie in this browser (it may have ended since). */
export function hasSessionCookie(): boolean {
  return document.cookie.split(';').some((part) => part.trim() === 'gf_session=1');
}

/**
 * Signs in from the session cookie when there is one (a reload, a new tab). Run before the first
 * render, so a signed-in user never sees the sign-in page flash by.
 */
export async function restoreSession(): Promise<void> {
  if (!isSignedIn() && hasSessionCookie()) await refreshNow();
}

/**
 * Exchanges the cookie's refresh token for a new access token (the server rotates the cookie);
 * false, and signed out, when the session is over. Uses plain fetch: the API client's middleware
 * calls this, so it must not go through itself. Concurrent callers share one refresh.
 */
export function refreshNow(): Promise<boolean> {
  if (inFlight) return inFlight;
  inFlight = acrossTabs(async () => {
    try {
      const response = await fetch('/api/v1/auth/refresh', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        credentials: 'same-origin',
      });
      if (!response.ok) {
        // 429 is a pause, not the end of the session; anything else (401: reused or expired) is.
        if (response.status !== 429) endSession({ tellOtherTabs: false });
        return false;
      }
      startSession((await response.json()) as AccessToken);
      return true;
    } catch {
      return false;
    }
  }).finally(() => {
    inFlight = null;
  });
  return inFlight;
}

/** Runs `task` while no other tab of this browser refreshes. */
function acrossTabs<T>(task: () => Promise<T>): Promise<T> {
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  return locks ? locks.request('geofence-session-refresh', task) : task();
}
