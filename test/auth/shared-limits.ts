/**
 * For tests of limits counted in Redis: a node's limiter connection may still be connecting just
 * after start, and meanwhile the node counts in its own memory (contract §0). These wait, by
 * behaviour alone, until each node's failed sign-ins are seen by another.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestApp } from '../helpers/app.ts';
import { call, randomIp, startIdentityApp } from '../helpers/identity.ts';

const failedSignIn = (t: TestApp, ip: string) =>
  call(t, '/auth/login', {
    body: { email: 'nobody@example.com', password: 'not the password' },
    remoteAddress: ip,
  });

/** Resolves once `from`'s failures (LOGIN_RATE_LIMIT `limit` of them) make `to` refuse the address. */
async function seenAcross(from: TestApp, to: TestApp, limit: number, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const ip = randomIp();
    for (let i = 0; i < limit; i++) await failedSignIn(from, ip);
    if ((await failedSignIn(to, ip)).statusCode === 429) return;
    await sleep(20);
  }
  throw new Error('the two nodes never shared their limits through Redis');
}

export async function limitsShared(a: TestApp, b: TestApp, loginLimit = 5): Promise<void> {
  const deadline = Date.now() + 5000;
  await seenAcross(a, b, loginLimit, deadline);
  await seenAcross(b, a, loginLimit, deadline);
}

/** With REDIS_URL in `env`: waits until `t` counts in Redis, shown by a second node seeing its failures. */
export async function countingInRedis(t: TestApp, env: Record<string, string>): Promise<void> {
  if (env.REDIS_URL === undefined) return;
  const observer = await startIdentityApp({ env });
  try {
    await limitsShared(t, observer);
  } finally {
    await observer.close();
  }
}
