/**
 * The dashboard's data layer: one TanStack Query client for every API read, so an answer is
 * shared by the pages that show it, a filter's answer is kept under its own key (a new filter
 * shows "Loading…", never the previous filter's rows) and a change invalidates what it touched.
 * Calls go through `answerOf`, which turns openapi-fetch's `{ data, error }` into data or an
 * `ApiFailure` carrying the API's own message.
 */
import { QueryClient, useQueryClient } from '@tanstack/react-query';
import { useCallback } from 'react';
import { onSessionChange } from '../auth/session.ts';
import { errorMessage, thrownMessage } from './client.ts';

/** An error answer of the API: its message (the contract's `detail`) and its status. */
export class ApiFailure extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiFailure';
    this.status = status;
  }
}

/** What a typed openapi-fetch call answers. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of an answer, or an ApiFailure with the message to show. */
export async function answerOf<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) throw new ApiFailure(response.status, errorMessage(error));
  return data as T;
}

/** What to show for a failed query or mutation, or null when there is none. */
export function failureMessage(error: unknown): string | null {
  if (error === null || error === undefined) return null;
  if (error instanceof ApiFailure) return error.message;
  return thrownMessage(error);
}

/** Lists are read again when older than this and shown again (mutations invalidate at once). */
const LIST_STALE_MS = 30_000;

/**
 * A 4xx answer is final (asking again gets the same answer, and a 429 asks us to slow down); a
 * network failure or a 5xx is tried once more.
 */
function retryOnce(failures: number, error: unknown): boolean {
  if (error instanceof ApiFailure && error.status < 500) return false;
  return failures < 1;
}

export function createQueryClient(): QueryClient {
  const client = new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: LIST_STALE_MS,
        retry: retryOnce,
        // A tab brought back does not send every list of the page again at once; pages that must
        // stay current poll (refetchInterval) or are refreshed by hand.
        refetchOnWindowFocus: false,
      },
      mutations: { retry: false },
    },
  });
  // Nothing read by one session may show in the next (another user may sign in in this tab).
  onSessionChange((signedIn) => {
    if (!signedIn) client.clear();
  });
  return client;
}

/** Marks every query under `key` stale and reads the ones on screen again (after a change). */
export function useInvalidate(): (key: readonly unknown[]) => void {
  const client = useQueryClient();
  return useCallback((key) => void client.invalidateQueries({ queryKey: key }), [client]);
}

/**
 * After a deletion: every query under `key` is stale, but none is read now. The page that showed
 * the deleted record is about to go, and reading it again would only answer 404; the lists are
 * read when they are shown next.
 */
export function useForgetDeleted(): (key: readonly unknown[]) => void {
  const client = useQueryClient();
  return useCallback(
    (key) => void client.invalidateQueries({ queryKey: key, refetchType: 'none' }),
    [client],
  );
}
