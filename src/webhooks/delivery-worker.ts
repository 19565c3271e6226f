/**
 * Webhook deliveries as a job kind of the one job loop (`src/jobs/job-worker.ts`, ADR 010, ADR 020):
 * a claim leases due deliveries under each webhook's rate limit; one webhook's deliveries are sent
 * one after the other in event order (different webhooks concurrently) with keep-alive connections;
 * outcomes are recorded in groups, with dead-lettering and one notification per webhook per group.
 * Deliveries that carry a workflow's `webhook` action tell their final outcome to `onSettled`, in the
 * recording transaction (the workflow engine's, wired at the composition root).
 */
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Notifier } from '../account/notifier.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import { withTransaction } from '../db/transaction.ts';
import { type JobKind, JobWorker } from '../jobs/job-worker.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/encryption.ts';
import { rateWindowsPurgeBefore } from './claim-policy.ts';
import { claimDueDeliveries, type SettledDelivery } from './delivery-claims.service.ts';
import {
  type AttemptRecord,
  type ClaimedDelivery,
  type DeadLettered,
  extendLeases,
  purgeRateWindows,
  recordAttempts,
  releaseLeases,
} from './delivery-queue.repository.ts';
import { sendAttempt } from './delivery-sender.ts';

export type { SettledDelivery } from './delivery-claims.service.ts';

export interface DeliveryWorkerOptions {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  secretBox: SecretBox;
  notifier: Pick<Notifier, 'notifyWorkspaceAdmins'>;
  dispatcher: Dispatcher;
  /** Delays between attempts (WEBHOOK_RETRY_SCHEDULE); attempts = length + 1. */
  retryScheduleMs: readonly number[];
  leaseMarginMs: number;
  /** Told, in the recording (or claiming) transaction, the final outcome of `workflow` deliveries. */
  onSettled?: (trx: Executor, settled: readonly SettledDelivery[]) => Promise<void>;
  /** Deliveries claimed per round. */
  batchSize?: number;
  /** Attempts in flight at most (claimed and not yet recorded). */
  maxInFlight?: number;
  workerId?: string;
}

export type DeliveryWorker = JobWorker<ClaimedDelivery, AttemptRecord>;

const PURGE_EVERY_MS = 60_000;

export function createDeliveryJobWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  return new JobWorker(new DeliveryKind(options), {
    clock: options.clock,
    logger: options.logger,
    batchSize: options.batchSize ?? 200,
    maxInFlight: options.maxInFlight ?? 512,
    workerId: options.workerId,
  });
}

class DeliveryKind implements JobKind<ClaimedDelivery, AttemptRecord> {
  readonly name = 'delivery';
  private readonly secrets = new Map<string, string>();
  private lastPurge = 0;

  private readonly o: DeliveryWorkerOptions;

  constructor(options: DeliveryWorkerOptions) {
    this.o = options;
  }

  async claim(workerId: string, limit: number, now: Date): Promise<ClaimedDelivery[]> {
    if (now.getTime() - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = now.getTime();
      await purgeRateWindows(this.o.db, rateWindowsPurgeBefore(now));
    }
    return withTransaction(this.o.db, (trx) =>
      claimDueDeliveries(trx, this.o.capabilities, {
        now,
        workerId,
        limit,
        leaseMarginMs: this.o.leaseMarginMs,
        onSettled: this.o.onSettled,
      }),
    );
  }

  serialKey(delivery: ClaimedDelivery): string {
    return delivery.webhook.id;
  }

  /**
   * If the next delivery's lease would end before its attempt could time out (earlier attempts of
   * the chain were slow), extends the leases of the rest of the chain in one statement.
   */
  async keepLeases(workerId: string, rest: readonly ClaimedDelivery[]): Promise<ReadonlySet<string>> {
    const next = rest[0];
    if (!next) return new Set();
    const now = this.o.clock.now().getTime();
    const timeoutMs = next.webhook.timeoutSeconds * 1000;
    if (next.leaseUntil.getTime() >= now + timeoutMs + this.o.leaseMarginMs / 2) return new Set();
    const until = new Date(now + timeoutMs + this.o.leaseMarginMs);
    const held = await extendLeases(
      this.o.db,
      workerId,
      rest.map((d) => d.id),
      until,
    );
    const lost = new Set<string>();
    for (const d of rest) {
      if (held.has(d.id)) d.leaseUntil = until;
      else lost.add(d.id);
    }
    return lost;
  }

  async execute(delivery: ClaimedDelivery): Promise<AttemptRecord> {
    const startedAt = this.o.clock.now();
    let secret = this.secrets.get(delivery.webhook.secretSealed);
    if (secret === undefined) {
      if (this.secrets.size > 10_000) this.secrets.clear();
      secret = this.o.secretBox.open(delivery.webhook.secretSealed);
      this.secrets.set(delivery.webhook.secretSealed, secret);
    }
    const outcome = await sendAttempt(this.o.dispatcher, {
      url: delivery.webhook.url,
      method: delivery.webhook.method,
      contentType: delivery.webhook.contentType,
      timeoutMs: delivery.webhook.timeoutSeconds * 1000,
      customHeaders: delivery.webhook.headers,
      secret,
      payload: delivery.payload,
      eventId: delivery.eventId,
      idempotencyKey: delivery.idempotencyKey,
      attempt: delivery.attempt,
    });
    return { delivery, startedAt, finishedAt: this.o.clock.now(), ...outcome };
  }

  /** E.g. a secret that no longer opens (ENCRYPTION_KEY changed): a failed attempt, not a crash. */
  failure(delivery: ClaimedDelivery, _error: unknown, startedAt: Date): AttemptRecord {
    return {
      delivery,
      startedAt,
      finishedAt: this.o.clock.now(),
      success: false,
      statusCode: null,
      durationMs: 0,
      errorMessage: 'Internal error: the attempt could not be made',
      bodyExcerpt: null,
      requestHeaders: null,
    };
  }

  async record(workerId: string, batch: readonly AttemptRecord[]): Promise<void> {
    const dead = await withTransaction(this.o.db, async (trx) => {
      const recorded = await recordAttempts(
        trx,
        this.o.capabilities,
        workerId,
        this.o.retryScheduleMs,
        [...batch],
        this.o.clock.now(),
      );
      const settled = settledWorkflowDeliveries(recorded, this.o.retryScheduleMs.length + 1);
      if (settled.length > 0) await this.o.onSettled?.(trx, settled);
      return recorded.dead;
    });
    await this.notifyDeadLetters(dead);
  }

  release(workerId: string, ids: readonly string[], now: Date): Promise<void> {
    return releaseLeases(this.o.db, workerId, [...ids], now);
  }

  private async notifyDeadLetters(dead: DeadLettered[]): Promise<void> {
    // One notification per webhook per recorded batch, not one per delivery: a dead endpoint can
    // dead-letter thousands at once.
    const groups = new Map<string, DeadLettered[]>();
    for (const d of dead) {
      const list = groups.get(d.delivery.webhook.id) ?? [];
      list.push(d);
      groups.set(d.delivery.webhook.id, list);
    }
    for (const list of groups.values()) {
      const first = list[0] as DeadLettered;
      const webhook = first.delivery.webhook;
      const count = list.length;
      try {
        await this.o.notifier.notifyWorkspaceAdmins({
          workspaceId: first.delivery.workspaceId,
          topic: 'dlq',
          type: 'webhook.dead_letter',
          title: `Webhook "${webhook.name}": ${count === 1 ? 'a delivery' : `${count} deliveries`} moved to the dead-letter queue`,
          body: `After ${first.delivery.attempt} attempts, delivery to ${webhook.url} failed: ${first.errorMessage}. Retry it with POST /api/v1/webhooks/dlq/{dlq_id}/retry.`,
          action: {
            label: 'Review and retry on the dashboard',
            path: `/webhooks/dead-letters?webhook=${encodeURIComponent(webhook.id)}`,
          },
          data: {
            webhook_id: webhook.id,
            webhook_name: webhook.name,
            dlq_ids: list.map((d) => d.dlqId),
            delivery_ids: list.map((d) => d.delivery.id),
            error_message: first.errorMessage,
          },
        });
      } catch (error) {
        this.o.logger.warn({ err: error, webhook: webhook.id }, 'dead-letter notification failed');
      }
    }
  }
}

/** The final outcomes of deliveries that carry a workflow's `webhook` action. */
function settledWorkflowDeliveries(
  recorded: { kept: readonly AttemptRecord[] },
  maxAttempts: number,
): SettledDelivery[] {
  return recorded.kept.flatMap((r) =>
    r.delivery.origin === 'workflow' && (r.success || r.delivery.attempt >= maxAttempts)
      ? [{ deliveryId: r.delivery.id, success: r.success, finishedAt: r.finishedAt }]
      : [],
  );
}
