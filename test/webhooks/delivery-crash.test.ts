/**
 * Crash safety (contract §5 "Deliveries survive a restart"): the real server in a child process,
 * deliveries pending, scheduled for retry and in flight at a slow receiver, SIGKILL, restart on the
 * same database. Every delivery completes; none is lost; a request is repeated only if it had
 * reached the receiver before the kill (in flight, or answered but not yet recorded), and then
 * with the same idempotency key and attempt number.
 *
 * Leases are ten minutes long here, so nothing the killed server leased becomes due by itself during
 * the test: the leases are back-dated in the database while no server runs (as running out would
 * leave them), and the restarted server must take every one of them. Retries stay a second apart:
 * an attempt that times out on a loaded machine is simply retried.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseDatabaseUrl } from '../../src/config.ts';
import { openDatabase } from '../../src/db/database.ts';
import type { TestDatabase } from '../helpers/database.ts';
import { createProcessDatabase, httpCall, spawnServer } from '../helpers/spawned-server.ts';
import { Receiver } from './delivery-helpers.ts';

const CRASH_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s,1s',
  WEBHOOK_LEASE_MARGIN: '10m',
  WEBHOOK_POLL_INTERVAL: '100ms',
};

/**
 * Ends at `now` the leases the killed server still holds, as if they had run out (a lease is the
 * delivery's `due_at` with `lease_owner` set); returns how many there were.
 */
async function expireLeases(url: string, now: Date): Promise<number> {
  const target = parseDatabaseUrl(url);
  assert.ok(target, `a database URL: ${url}`);
  const handle = openDatabase(target);
  try {
    const result = await handle.db
      .updateTable('webhook_deliveries')
      .set({ due_at: now })
      .where('status', '=', 'pending')
      .where('lease_owner', 'is not', null)
      .where('due_at', '>', now)
      .executeTakeFirstOrThrow();
    return Number(result.numUpdatedRows);
  } finally {
    await handle.close();
  }
}

/** One API call that must succeed (any 2xx); its JSON body. */
async function api<T>(
  base: string,
  method: string,
  url: string,
  token: string | undefined,
  body?: unknown,
): Promise<T> {
  const answer = await httpCall<T>(base, method, url, {
    ...(token ? { token } : {}),
    ...(body === undefined ? {} : { body }),
  });
  if (answer.status >= 300)
    throw new Error(`${method} ${url} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

describe('deliveries survive SIGKILL', () => {
  let database: TestDatabase;
  let dir: string;
  let receiver: Receiver;
  const children: ChildProcess[] = [];

  before(async () => {
    database = await createProcessDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-crash-'));
    receiver = await Receiver.start();
  });
  after(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await receiver.close();
    await database.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('kill mid-flight, restart: every delivery completes, duplicates only of requests in flight', async () => {
    // Slow answers keep attempts in flight; every 7th request fails so retries are pending too.
    receiver.respond = (_req, index) => ({ status: index % 7 === 3 ? 500 : 200, delayMs: 250 });
    const first = await spawnServer(database, dir, CRASH_ENV);
    children.push(first.child);
    const email = 'crash@example.com';
    const password = 'a long password';
    await api(first.base, 'POST', '/auth/register', undefined, { email, password }).catch((error: Error) => {
      throw new Error(`${error.message}\n${first.output()}`);
    });
    const { access_token: token } = await api<{ access_token: string }>(
      first.base,
      'POST',
      '/auth/login',
      undefined,
      {
        email,
        password,
      },
    );
    const hooks: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      const hook = await api<{ id: string }>(first.base, 'POST', '/webhooks', token, {
        name,
        url: receiver.url,
        timeout_seconds: 2,
        rate_limit_per_minute: 10000,
      });
      hooks.push(hook.id);
    }
    await api(first.base, 'POST', '/geofences', token, {
      name: 'Yard',
      geometry: { type: 'Circle', coordinates: [10, 50], radius: 100 },
    });
    const base = Date.now() - 3_600_000;
    const events = 30;
    await api(first.base, 'POST', '/locations/batch', token, {
      locations: Array.from({ length: events }, (_v, i) => ({
        device_external_id: 'crash-device',
        coordinates: i % 2 === 0 ? [10, 50] : [10.5, 50],
        timestamp: new Date(base + i * 1000).toISOString(),
      })),
    });
    const total = events * hooks.length;

    await receiver.waitFor(12);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    const killedAt = Date.now();
    const beforeKill = new Set(
      receiver.requests.filter((r) => r.realMs < killedAt).map((r) => String(r.headers['x-idempotency-key'])),
    );
    assert.ok(beforeKill.size < total, 'the kill happened mid-way');
    const expired = await expireLeases(database.url, new Date(killedAt));
    assert.ok(expired > 0, 'the kill left deliveries leased');

    const second = await spawnServer(database, dir, CRASH_ENV);
    children.push(second.child);
    receiver.respond = () => ({ status: 200, delayMs: 5 });
    const deadline = Date.now() + 60_000;
    let succeeded = 0;
    while (Date.now() < deadline) {
      succeeded = 0;
      for (const id of hooks) {
        const page = await api<{ pagination: { total: number } }>(
          second.base,
          'GET',
          `/webhooks/${id}/deliveries?status=success&limit=1`,
          token,
        );
        succeeded += page.pagination.total;
      }
      if (succeeded === total) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(succeeded, total, `every delivery completed (server output: ${second.output()})`);

    // Every delivery reached the receiver with a 2xx at least once; repeats only of pre-kill requests.
    const byKey = new Map<string, typeof receiver.requests>();
    for (const r of receiver.requests) {
      const key = String(r.headers['x-idempotency-key']);
      byKey.set(key, [...(byKey.get(key) ?? []), r]);
    }
    assert.equal(byKey.size, total, 'one idempotency key per delivery, none lost');
    const repeatedAfterKill: string[] = [];
    for (const [key, requests] of byKey) {
      const attempts = requests.map((r) => r.headers['x-svc-attempt']);
      const distinct = new Set(attempts);
      if (distinct.size !== attempts.length) {
        // The same attempt twice: only possible for a request that was in flight at the kill.
        repeatedAfterKill.push(key);
        assert.ok(beforeKill.has(key), `attempt repeated for ${key} that had not been sent before the kill`);
      }
    }
    assert.ok(
      repeatedAfterKill.length <= beforeKill.size,
      `${repeatedAfterKill.length} repeats, ${beforeKill.size} sent before the kill`,
    );
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
  });
});
