/** Calls to the service from bench:ingest: JSON requests, a pool of them, an API-key account. */

export type Auth = Record<string, string>;

export async function api(
  base: string,
  method: string,
  url: string,
  body: unknown,
  auth: Auth,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}/api/v1${url}`, {
    method,
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url} → ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Runs `work` on every item, `width` at a time. */
export async function pool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

/** Registers `email` (a user with a workspace of its own) and returns the headers of an all-scopes API key. */
export async function apiKeyAccount(base: string, email: string): Promise<Auth> {
  const password = 'bench password';
  await api(base, 'POST', '/auth/register', { email, password }, {});
  const pair = await api(base, 'POST', '/auth/login', { email, password }, {});
  const jwt = { authorization: `Bearer ${String(pair.access_token)}` };
  const key = String(
    (await api(base, 'POST', '/account/api-keys', { name: 'bench', scopes: ['*'] }, jwt)).key,
  );
  return { 'x-api-key': key };
}
