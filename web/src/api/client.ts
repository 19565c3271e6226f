/**
 * The typed API client: openapi-fetch over the types generated from our OpenAPI document
 * (`npm run web:types`), so a drifting API fails the dashboard's type-check. A middleware adds the
 * access token; a 401 refreshes from the session cookie once and replays the request: an expired
 * token (the tab slept past the planned refresh) is renewed, and a session ended elsewhere (signed
 * out in another tab, a password reset) fails the refresh, which signs this tab out too.
 */
import createClient, { type Middleware } from 'openapi-fetch';
import { accessToken, refreshNow } from '../auth/session.ts';
import type { components, paths } from './schema.ts';

export type Schemas = components['schemas'];
export type ApiError = Schemas['Error'];

const replayable = new Map<string, Request>();

const auth: Middleware = {
  onRequest({ request, id }) {
    const token = accessToken();
    if (token && !request.headers.has('authorization'))
      request.headers.set('authorization', `Bearer ${token}`);
    if (token) replayable.set(id, request.clone());
    return request;
  },
  async onResponse({ response, id }) {
    const original = replayable.get(id);
    replayable.delete(id);
    if (response.status !== 401 || !original || !(await refreshNow())) return response;
    original.headers.set('authorization', `Bearer ${accessToken()}`);
    return fetch(original);
  },
};

export const api = createClient<paths>({ baseUrl: '' });
api.use(auth);

/** The message to show for a failed call: the contract's `detail`, or a readable summary of a 422. */
export function errorMessage(error: unknown): string {
  if (!error || typeof error !== 'object') return 'Something went wrong. Please try again.';
  const detail = (error as { detail?: unknown }).detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) {
    return detail
      .map((issue: { loc?: unknown[]; msg?: string }) => {
        const field = (issue.loc ?? []).filter((part) => part !== 'body').join('.');
        return field ? `${field}: ${issue.msg}` : (issue.msg ?? '');
      })
      .join('; ');
  }
  return 'Something went wrong. Please try again.';
}

/**
 * What to show for a call that threw instead of answering: openapi-fetch rejects when the network
 * fails (fetch's TypeError), the clipboard when it is denied.
 */
export function thrownMessage(failure: unknown): string {
  if (failure instanceof TypeError) {
    return `The server could not be reached (${failure.message}). Check the connection and try again.`;
  }
  if (failure instanceof Error) return failure.message;
  return errorMessage(failure);
}
