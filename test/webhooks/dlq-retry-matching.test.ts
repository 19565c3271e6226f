/**
 * "Retry all matching" (contract §5 "Operating deliveries", ADR 018) over real HTTP with a manual
 * clock: 250 dead letters seeded through the repositories, a filter that takes some of them, the
 * job worked through in batches by the job engine's retry worker (round by round), its progress
 * read back, each entry requeued once as the single retry would; a worker that dies holding the
 * job is taken over when its lease runs out and nothing is retried twice; another workspace's job
 * is not found.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDeadLetterRetryWorker } from '../../src/engine.ts';
import { RetryJobKind, type RetryJobWorker } from '../../src/webhooks/dlq-retry-job.ts';
import { call, expectError, expectStatus, signUp } from '../helpers/identity.ts';
import { seedDeadLetters } from './dead-letter-seed.ts';
import {
  createWebhook,
  type DeadLetterOut,
  type DeliveryHarness,
  startDeliveryHarness,
} from './delivery-helpers.ts';

interface JobOut {
  job_id: string;
  status: 'running' | 'done';
  matched: number;
  queued: number;
  failed: number;
  finished_at: string | null;
}

describe('POST /webhooks/dlq/retry-matching', () => {
  let h: DeliveryHarness;
  let retries: RetryJobWorker;

  before(async () => {
    h = await startDeliveryHarness();
    retries = createDeadLetterRetryWorker(h.t.deps);
  });
  after(async () => {
    await retries.stop();
    await h.close();
  });

  const start = (body: Record<string, unknown>) =>
    call(h.t, '/webhooks/dlq/retry-matching', { token: h.token, body });
  const status = async (jobId: string): Promise<JobOut> =>
    expectStatus<JobOut>(
      await call(h.t, `/webhooks/dlq/retry-matching/${jobId}`, { token: h.token }),
      200,
      'job status',
    );

  async function entries(query: Record<string, string> = {}): Promise<DeadLetterOut[]> {
    const all: DeadLetterOut[] = [];
    for (let offset = 0; ; offset += 200) {
      const res = await call(h.t, '/webhooks/dlq', {
        token: h.token,
        query: { limit: '200', offset: String(offset), ...query },
      });
      const page = expectStatus<{ results: DeadLetterOut[]; pagination: { has_more: boolean } }>(res, 200);
      all.push(...page.results);
      if (!page.pagination.has_more) return all;
    }
  }

  async function seed(name: string, count: number, firstQueuedAt: Date, errorMessage?: string) {
    const webhook = await createWebhook(h, { name, url: `https://example.com/${name}` });
    const made = await seedDeadLetters(h.t.deps.database.db, h.t.deps.database.capabilities, {
      workspaceId: h.user.workspace.id,
      webhook,
      count,
      firstQueuedAt,
      errorMessage,
    });
    return { webhook, made };
  }

  async function newDeliveriesOf(webhookId: string) {
    return h.t.deps.database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'source_delivery_id', 'origin', 'idempotency_key'])
      .where('webhook_id', '=', webhookId)
      .where('origin', '=', 'dlq_retry')
      .execute();
  }

  test('250 entries across pages, filtered by webhook, time and error text: retried in batches, each once', async () => {
    const t0 = new Date(h.t.clock.now().getTime() - 86_400_000);
    const { webhook, made } = await seed('outage', 250, t0);
    // Entries of another webhook, and of this one with another error, are not taken.
    await seed('other', 5, t0);
    const timeouts = await seedDeadLetters(h.t.deps.database.db, h.t.deps.database.capabilities, {
      workspaceId: h.user.workspace.id,
      webhook,
      count: 3,
      firstQueuedAt: new Date(t0.getTime() + 500),
      errorMessage: 'Timed out after 30 s',
    });
    assert.equal(timeouts.length, 3);

    const accepted = expectStatus<{ job_id: string; matched: number }>(
      await start({
        webhook_id: webhook.id,
        event_type: 'webhook.test',
        from: t0.toISOString(),
        to: new Date(t0.getTime() + 249_000).toISOString(),
        error_contains: 'service UNAVAILABLE',
      }),
      202,
      'start',
    );
    assert.equal(accepted.matched, 250);
    const otherType = expectStatus<{ matched: number }>(
      await start({ webhook_id: webhook.id, event_type: 'geofence.enter' }),
      202,
    );
    assert.equal(otherType.matched, 0, 'no entry of another event type');
    const initial = await status(accepted.job_id);
    assert.deepEqual(
      [initial.status, initial.matched, initial.queued, initial.failed],
      ['running', 250, 0, 0],
    );

    // One round is one batch of 200: the job shows its progress and is still running.
    assert.equal(await retries.runOnce(), 1);
    const halfway = await status(accepted.job_id);
    assert.deepEqual([halfway.status, halfway.queued, halfway.failed], ['running', 200, 0]);
    assert.equal(await retries.runOnce(), 1);
    const done = await status(accepted.job_id);
    assert.deepEqual([done.status, done.queued, done.failed], ['done', 250, 0]);
    assert.ok(done.finished_at, 'finished_at set');
    assert.equal(await retries.runOnce(), 0, 'nothing left to claim');

    const after = new Map((await entries()).map((e) => [e.dlq_id, e]));
    for (const m of made) assert.equal(after.get(m.dlqId)?.requeued, true, `entry ${m.dlqId} requeued`);
    for (const m of timeouts) assert.equal(after.get(m.dlqId)?.requeued, false, 'another error is not taken');
    const created = await newDeliveriesOf(webhook.id);
    assert.equal(created.length, 250, 'one new delivery per entry');
    assert.deepEqual(
      new Set(created.map((d) => d.source_delivery_id)),
      new Set(made.map((m) => m.deliveryId)),
      'each entry retried exactly once, linked to the delivery it repeats',
    );

    // Asked again: nothing left matching, a job done at once.
    const again = expectStatus<{ job_id: string; matched: number }>(
      await start({ webhook_id: webhook.id, error_contains: '503' }),
      202,
    );
    assert.equal(again.matched, 0);
    assert.equal((await status(again.job_id)).status, 'done');
  });

  test('a worker that dies holding the job: another takes it when the lease runs out, nothing twice', async () => {
    const t0 = new Date(h.t.clock.now().getTime() - 3_600_000);
    const { webhook, made } = await seed('crash', 230, t0, 'HTTP 502 Bad Gateway');
    // An entry whose webhook is gone is refused as the single retry refuses it: counted as failed.
    const gone = await seed('gone', 1, new Date(t0.getTime() - 1000), 'HTTP 502 Bad Gateway');
    expectStatus(await call(h.t, `/webhooks/${gone.webhook.id}`, { token: h.token, method: 'DELETE' }), 204);
    const accepted = expectStatus<{ job_id: string; matched: number }>(
      await start({ error_contains: '502 bad' }),
      202,
    );
    assert.equal(accepted.matched, 231);

    // A worker claims the job and dies before its batch (its lease is left to run out).
    const kind = new RetryJobKind({
      db: h.t.deps.database.db,
      capabilities: h.t.deps.database.capabilities,
      clock: h.t.clock,
      signals: h.t.deps.signals,
      logger: h.t.deps.logger,
    });
    const [claimed] = await kind.claim('dead-worker', 4, h.t.clock.now());
    assert.equal(claimed?.id, accepted.job_id);
    assert.equal(await retries.runOnce(), 0, 'leased: not taken while the lease holds');

    h.t.clock.advance(61_000);
    assert.equal(await retries.runOnce(), 1, 'taken over once the lease ran out');
    assert.equal(await retries.runOnce(), 1);
    const done = await status(accepted.job_id);
    assert.deepEqual([done.status, done.queued, done.failed], ['done', 230, 1]);

    // The dead worker comes back and runs its stale claim: its lease is gone, it writes nothing.
    const stale = await kind.execute(claimed);
    assert.deepEqual(stale, { id: accepted.job_id, queued: 0, more: false });
    const created = await newDeliveriesOf(webhook.id);
    assert.equal(created.length, 230, 'no entry retried twice');
    assert.equal(new Set(created.map((d) => d.source_delivery_id)).size, made.length);
  });

  test('422s, and another workspace’s job is not found', async () => {
    expectError(await start({ unknown: 1 }), 422, 'VALIDATION_ERROR', 'extra field');
    const swapped = expectError(
      await start({ from: '2026-03-02T00:00:00Z', to: '2026-03-01T00:00:00Z' }),
      422,
      'VALIDATION_ERROR',
      'from after to',
    );
    assert.deepEqual(swapped.detail, [
      { type: 'value_error', loc: ['body', 'from'], msg: 'from must not be after to' },
    ]);
    expectError(await start({ error_contains: '' }), 422, 'VALIDATION_ERROR', 'empty text');

    const other = await signUp(h.t, 'other');
    const theirs = expectStatus<{ job_id: string }>(
      await call(h.t, '/webhooks/dlq/retry-matching', { token: other.tokens.access_token, body: {} }),
      202,
    );
    const res = await call(h.t, `/webhooks/dlq/retry-matching/${theirs.job_id}`, { token: h.token });
    assert.equal(expectError(res, 404, 'NOT_FOUND').detail, 'Retry job not found');
    expectError(
      await call(h.t, `/webhooks/dlq/retry-matching/${crypto.randomUUID()}`, { token: h.token }),
      404,
      'NOT_FOUND',
    );
  });
});
