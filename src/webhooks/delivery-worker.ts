/**
 * The delivery worker (ADR 010). A loop claims due deliveries in batches (a lease each), sends them
 * with keep-alive connections — different webhooks concurrently, one webhook's deliveries one after
 * the other in event order — and records outcomes in batches (group commit). `runOnce()` does one
 * claim → send → record round and is how tests drive the retry schedule with a manual clock.
 *
 * Shutdown (contract §0): `stop()` stops claiming, gives back the leases of claimed deliveries not
 * yet sent at once, so another worker takes them without waiting for the leases to run out, then
 * lets attempts in flight finish (each is bounded by its timeout) and records them. A crash
 * instead leaves leases to expire: the delivery is attempted again (same attempt number and
 * idempotency key) — at least once, never lost.
 *
 * Outcomes that cannot be recorded because the database is unreachable are kept and recorded once
 * it answers again: recording is guarded by the lease, and an attempt made is not made twice
 * just because the database restarted.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Notifier } from '../account/notifier.ts';
import { isConnectionFailure } from '../db/availability.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/encryption.ts';
import { uuidv7 } from '../shared/ids.ts';
import { type SettledDelivery, settleWebhookActions } from '../workflows/action-queue.repository.ts';
import { rateWindowsPurgeBefore } from './claim-policy.ts';
import { claimDueDeliveries } from './delivery-claims.service.ts';
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
import type { WakeSignal } from './wake-signal.ts';

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
  /** Deliveries claimed per round. */
  batchSize?: number;
  /** Attempts in flight at most (claimed and not yet recorded). */
  maxInFlight?: number;
  workerId?: string;
}

const PURGE_EVERY_MS = 60_000;
/** Between tries to record outcomes while the database is unreachable. */
const RECORD_RETRY_MS = 500;
/** Group commit of outcomes: at most this long after an attempt ends, or at once at FLUSH_AT waiting. */
const FLUSH_DELAY_MS = 3;
const FLUSH_AT = 200;

export class DeliveryWorker {
  readonly id: string;
  private readonly o: DeliveryWorkerOptions;
  private readonly batchSize: number;
  private readonly maxInFlight: number;
  private readonly secrets = new Map<string, string>();
  private inFlight = 0;
  private results: AttemptRecord[] = [];
  private flushing: Promise<void> | undefined;
  private stopping = false;
  private loop: Promise<void> | undefined;
  private chains = new Set<Promise<void>>();
  /** Claimed deliveries whose attempt has not started: what `stop()` gives back at once. */
  private readonly waiting = new Set<string>();
  /** Deliveries given back (or whose lease was lost): their chains skip them. */
  private readonly skipped = new Set<string>();
  private wakeLoop: (() => void) | undefined;
  private lastPurge = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private wanted = false;
  private unsubscribe: (() => void) | undefined;

  constructor(options: DeliveryWorkerOptions) {
    this.o = options;
    this.id = options.workerId ?? `worker-${uuidv7()}`;
    this.batchSize = options.batchSize ?? 200;
    this.maxInFlight = options.maxInFlight ?? 512;
  }

  /** One round: claim a batch, send it, record the outcomes. Returns how many were attempted. */
  async runOnce(): Promise<number> {
    const claimed = await this.claim(this.batchSize);
    await Promise.all(this.launch(claimed));
    await this.flush();
    return claimed.length;
  }

  /** Runs until `stop()`: claims whenever there is room and work, else waits for `signal` or `pollMs`. */
  start(signal: WakeSignal, pollMs: number): void {
    if (this.loop) return;
    // A notify while the loop is busy claiming must not be lost: it is remembered in `wanted`.
    this.unsubscribe = signal.subscribe(() => {
      this.wanted = true;
      this.wakeLoop?.();
    });
    this.loop = (async () => {
      while (!this.stopping) {
        try {
          const room = Math.min(this.batchSize, this.maxInFlight - this.inFlight);
          // Claim in sizeable batches: a claim per few deliveries would cost more than the sends.
          if (room < Math.min(this.batchSize, this.maxInFlight) / 2) {
            await this.pause(pollMs);
            continue;
          }
          this.wanted = false;
          const claimed = await this.claim(room);
          if (claimed.length > 0) {
            // Not awaited: the next claim runs while these are sent (chains never reject).
            void Promise.all(this.launch(claimed));
            continue;
          }
          if (!this.wanted) await this.pause(pollMs);
        } catch (error) {
          this.o.logger.error({ err: error, worker: this.id }, 'delivery worker round failed');
          await this.pause(1000);
        }
      }
    })();
  }

  /**
   * Stops claiming, gives back every claimed delivery not yet started (at once, not after the
   * attempts in flight), then waits for those in flight and records their outcomes.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.wakeLoop?.();
    await this.loop;
    const givenBack = [...this.waiting];
    for (const id of givenBack) this.skipped.add(id);
    this.waiting.clear();
    this.o.logger.info(
      { worker: this.id, given_back: givenBack.length, in_flight: this.inFlight - givenBack.length },
      'delivery worker stopping: claimed deliveries not started given back, attempts in flight finishing',
    );
    const released = releaseLeases(this.o.db, this.id, givenBack, this.o.clock.now()).catch(
      (error: unknown) =>
        // Their leases run out instead: another worker takes them a little later.
        this.o.logger.warn({ err: error, worker: this.id }, 'could not give back claimed deliveries'),
    );
    await Promise.all([...this.chains, released]);
    await this.flush();
  }

  /** Claimed deliveries not started yet (tests read it). */
  get waitingCount(): number {
    return this.waiting.size;
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done(): void {
        clearTimeout(timer);
        if (self.wakeLoop === done) self.wakeLoop = undefined;
        resolve();
      }
      this.wakeLoop = done;
    });
  }

  private async claim(limit: number): Promise<ClaimedDelivery[]> {
    const now = this.o.clock.now();
    if (now.getTime() - this.lastPurge >= PURGE_EVERY_MS) {
      this.lastPurge = now.getTime();
      await purgeRateWindows(this.o.db, rateWindowsPurgeBefore(now));
    }
    const claimed = await withTransaction(this.o.db, (trx) =>
      claimDueDeliveries(trx, this.o.capabilities, {
        now,
        workerId: this.id,
        limit,
        leaseMarginMs: this.o.leaseMarginMs,
      }),
    );
    this.inFlight += claimed.length;
    for (const d of claimed) this.waiting.add(d.id);
    return claimed;
  }

  /** Starts one chain per webhook; returns the chains' promises. */
  private launch(claimed: ClaimedDelivery[]): Promise<void>[] {
    const byWebhook = new Map<string, ClaimedDelivery[]>();
    for (const d of claimed) {
      const list = byWebhook.get(d.webhook.id) ?? [];
      list.push(d);
      byWebhook.set(d.webhook.id, list);
    }
    const started: Promise<void>[] = [];
    for (const list of byWebhook.values()) {
      const chain = this.runChain(list)
        .catch((error: unknown) =>
          this.o.logger.error({ err: error, worker: this.id }, 'delivery chain failed'),
        )
        .finally(() => {
          this.chains.delete(chain);
          // Room in flight again: the loop may claim more.
          this.wakeLoop?.();
        });
      this.chains.add(chain);
      started.push(chain);
    }
    return started;
  }

  private async runChain(list: ClaimedDelivery[]): Promise<void> {
    let lost = new Set<string>();
    for (const [index, delivery] of list.entries()) {
      if (!this.skipped.has(delivery.id) && !lost.has(delivery.id)) {
        try {
          lost = await this.keepLeases(list.slice(index), lost);
        } catch (error) {
          // Unsure whether we still hold them: send none; their leases run out and they are retried.
          this.o.logger.error({ err: error, worker: this.id }, 'extending delivery leases failed');
          lost = new Set([...lost, ...list.slice(index).map((d) => d.id)]);
        }
      }
      // Checked after the last await before the send: `stop()` may have given it back meanwhile.
      if (this.skipped.delete(delivery.id) || lost.has(delivery.id)) {
        this.waiting.delete(delivery.id);
        this.inFlight -= 1;
        continue;
      }
      this.waiting.delete(delivery.id);
      let record: AttemptRecord;
      try {
        record = await this.attempt(delivery);
      } catch (error) {
        // E.g. a secret that no longer opens (ENCRYPTION_KEY changed): a failed attempt, not a crash.
        this.o.logger.error({ err: error, delivery: delivery.id }, 'delivery attempt could not be made');
        const now = this.o.clock.now();
        record = {
          delivery,
          startedAt: now,
          finishedAt: now,
          success: false,
          statusCode: null,
          durationMs: 0,
          errorMessage: 'Internal error: the attempt could not be made',
          bodyExcerpt: null,
          requestHeaders: null,
        };
      }
      this.inFlight -= 1;
      this.results.push(record);
      this.scheduleFlush();
    }
  }

  /**
   * Before the next send of a chain: if its lease would end before this attempt could time out
   * (earlier attempts were slow), extend the leases of the rest of the chain in one statement.
   * MUST run before each send: a send after the lease ran out could duplicate another worker's.
   */
  private async keepLeases(rest: ClaimedDelivery[], lost: Set<string>): Promise<Set<string>> {
    const next = rest[0];
    if (!next) return lost;
    const now = this.o.clock.now().getTime();
    const timeoutMs = next.webhook.timeoutSeconds * 1000;
    if (next.leaseUntil.getTime() >= now + timeoutMs + this.o.leaseMarginMs / 2) return lost;
    const until = new Date(now + timeoutMs + this.o.leaseMarginMs);
    const held = await extendLeases(
      this.o.db,
      this.id,
      rest.map((d) => d.id),
      until,
    );
    const out = new Set(lost);
    for (const d of rest) {
      if (held.has(d.id)) d.leaseUntil = until;
      else out.add(d.id);
    }
    return out;
  }

  private async attempt(delivery: ClaimedDelivery): Promise<AttemptRecord> {
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

  /**
   * Outcomes are recorded a few milliseconds after the first of a group finishes (or at once when
   * many are waiting): one transaction for many attempts instead of one each.
   */
  private scheduleFlush(): void {
    if (this.results.length >= FLUSH_AT) {
      void this.flush();
      return;
    }
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      void this.flush();
    }, FLUSH_DELAY_MS);
  }

  /** Group commit: one transaction records everything finished since the last one. */
  private flush(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (this.flushing) return this.flushing.then(() => (this.results.length > 0 ? this.flush() : undefined));
    if (this.results.length === 0) return Promise.resolve();
    this.flushing = (async () => {
      while (this.results.length > 0) {
        const batch = this.results;
        this.results = [];
        try {
          const dead = await withTransaction(this.o.db, async (trx) => {
            const now = this.o.clock.now();
            const recorded = await recordAttempts(
              trx,
              this.o.capabilities,
              this.id,
              this.o.retryScheduleMs,
              batch,
              now,
            );
            await settleWebhookActions(
              trx,
              this.o.capabilities,
              settledWorkflowDeliveries(recorded, this.o.retryScheduleMs.length + 1),
            );
            return recorded.dead;
          });
          await this.notifyDeadLetters(dead);
        } catch (error) {
          if (isConnectionFailure(error)) {
            // Kept, not dropped: recorded once the database answers, so nothing is sent twice.
            this.o.logger.warn(
              { err: error, worker: this.id, count: batch.length },
              'database unavailable: attempt outcomes kept until it answers',
            );
            this.results = batch.concat(this.results);
            await delay(RECORD_RETRY_MS);
            continue;
          }
          // The leases run out and the deliveries are attempted again: at least once, never lost.
          this.o.logger.error(
            { err: error, worker: this.id, count: batch.length },
            'recording attempts failed',
          );
        }
      }
    })().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
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
