/**
 * When the delivery page looks again by itself. Only while something is about to happen: the next
 * attempt is due within a minute (or running now), or "Retry now" was pressed in the last two
 * minutes. A retry hours away is not worth a request every two seconds; the page wakes up shortly
 * before it instead. Nothing while the tab is hidden.
 */
import { useEffect, useSyncExternalStore } from 'react';
import type { DeliveryDetail } from './types.ts';

const POLL_MS = 2000;
const DUE_SOON_MS = 60_000;
const AFTER_RETRY_MS = 120_000;
/** The longest wait before looking again (setTimeout overflows past 2^31 ms). */
const MAX_WAIT_MS = 3_600_000;

/** Milliseconds until the page should load the delivery again, or null for not at all. */
export function nextPollIn(delivery: DeliveryDetail, retriedAt: number | null, now: number): number | null {
  if (delivery.status !== 'pending') return null;
  if (retriedAt !== null && now - retriedAt < AFTER_RETRY_MS) return POLL_MS;
  // No next attempt planned while pending: one is being made (or queued to be) now.
  if (delivery.next_retry_at === null) return POLL_MS;
  const until = Date.parse(delivery.next_retry_at) - now;
  if (until <= DUE_SOON_MS) return POLL_MS;
  return Math.min(until - DUE_SOON_MS, MAX_WAIT_MS);
}

function subscribeVisibility(listener: () => void): () => void {
  document.addEventListener('visibilitychange', listener);
  return () => document.removeEventListener('visibilitychange', listener);
}

function usePageHidden(): boolean {
  return useSyncExternalStore(subscribeVisibility, () => document.hidden);
}

/**
 * Calls `reload` when `nextPollIn` says so. `loading` is a dependency so that every answer (also a
 * failed one, which leaves `delivery` as it was) schedules the next look.
 */
export function useDeliveryPolling(
  delivery: DeliveryDetail | null,
  loading: boolean,
  retriedAt: number | null,
  reload: () => void,
): void {
  const hidden = usePageHidden();
  useEffect(() => {
    if (delivery === null || loading || hidden) return;
    const wait = nextPollIn(delivery, retriedAt, Date.now());
    if (wait === null) return;
    const timer = setTimeout(reload, wait);
    return () => clearTimeout(timer);
  }, [delivery, loading, hidden, retriedAt, reload]);
}
