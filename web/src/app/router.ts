/**
 * A small history-API router: the path picks the page, the query string holds a page's filters so
 * a view can be shared as a link. A whole routing library would cost more than it gives here.
 */
import { useSyncExternalStore } from 'react';

const listeners = new Set<() => void>();
/** Moves since the document loaded (links, back and forward, redirects). */
let moves = 0;
const notify = (): void => {
  moves += 1;
  for (const l of listeners) l();
};

/** How often the address changed in this document: 0 while on the page the browser opened. */
export function navigations(): number {
  return moves;
}
window.addEventListener('popstate', notify);

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const snapshot = (): string => window.location.pathname + window.location.search;

export interface Location {
  path: string;
  query: URLSearchParams;
}

export function useLocation(): Location {
  const href = useSyncExternalStore(subscribe, snapshot);
  const url = new URL(href, window.location.origin);
  return { path: url.pathname, query: url.searchParams };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === snapshot()) return;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  notify();
}

/** Replaces the query string (filters) without a new history entry per keystroke. */
export function setQuery(values: Record<string, string | null | undefined>): void {
  const url = new URL(window.location.href);
  for (const [key, value] of Object.entries(values)) {
    if (value === null || value === undefined || value === '') url.searchParams.delete(key);
    else url.searchParams.set(key, value);
  }
  navigate(url.pathname + url.search, { replace: true });
}
