/** Calls to the service's API from the end-to-end benchmarks, and the account they act as. */
import { Agent, fetch } from 'undici';

/**
 * At most 64 connections to the server: when it falls behind, requests wait here (their send time
 * is already stamped) instead of opening a connection each until the server's accept queue
 * overflows and a connect times out, ending the bench.
 */
const agent = new Agent({ connections: 64 });

export async function api<T>(
  base: string,
  method: string,
  url: string,
  token?: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${base}/api/v1${url}`, {
    dispatcher: agent,
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Registers `email` (a user with a workspace of its own) and returns its access token. */
export async function signUp(base: string, email: string): Promise<string> {
  const password = 'bench password';
  await api(base, 'POST', '/auth/register', undefined, { email, password });
  const { access_token: token } = await api<{ access_token: string }>(
    base,
    'POST',
    '/auth/login',
    undefined,
    { email, password },
  );
  // Creates the workspace's subscription row on the server's DEFAULT_PLAN.
  await api(base, 'GET', '/subscriptions/current', token).catch(() => undefined);
  return token;
}

/** Environment of a service process under an end-to-end delivery benchmark. */
export const DELIVERY_BENCH_ENV = {
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  // Unlimited event quota: the bench must measure delivery, not the plan's throttle.
  DEFAULT_PLAN: 'enterprise',
};
