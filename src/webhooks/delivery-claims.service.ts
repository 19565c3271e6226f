/**
 * A worker's claim of due deliveries (ADR 010 "Claiming and leases"): reads what is due, fails the
 * deliveries of deleted webhooks, lets the claim policy decide which may be sent now under each
 * webhook's rate limit, and writes the leases, the put-off due times and the counted sends. Runs in
 * the transaction the worker opens for it, so the rows read are the rows written.
 */
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor } from '../db/transaction.ts';
import { planClaims, rateWindowStart } from './claim-policy.ts';
import {
  type ClaimedDelivery,
  type ClaimWrite,
  countedSends,
  countSends,
  failOrphans,
  lockClaimableWebhooks,
  selectDue,
  writeClaims,
} from './delivery-queue.repository.ts';

export interface ClaimOptions {
  now: Date;
  workerId: string;
  limit: number;
  /** The lease lasts the webhook's timeout plus this margin (ADR 010). */
  leaseMarginMs: number;
  /** Told the failure of `workflow` deliveries whose webhook was deleted, in the claim's transaction. */
  onSettled?: (trx: Executor, settled: readonly SettledDelivery[]) => Promise<void>;
}

/** The final outcome of a delivery that carries a workflow's `webhook` action. */
export interface SettledDelivery {
  deliveryId: string;
  success: boolean;
  finishedAt: Date;
}

/**
 * Claims up to `limit` due deliveries: leases those the webhooks' rate limits allow now and moves
 * the others to when they may be sent, without using an attempt. Returns the leased ones, in due
 * order. Each leased delivery goes to its webhook's URL and method as they are now.
 */
export async function claimDueDeliveries(
  trx: Executor,
  capabilities: DialectCapabilities,
  options: ClaimOptions,
): Promise<ClaimedDelivery[]> {
  const { now, workerId } = options;
  const due = await selectDue(trx, capabilities, now, options.limit);
  if (due.length === 0) return [];
  const orphans = due.filter((d) => d.webhookId === null);
  await failOrphans(
    trx,
    orphans.map((d) => d.id),
  );
  const settled = orphans
    .filter((d) => d.origin === 'workflow')
    .map((d) => ({ deliveryId: d.id, success: false, finishedAt: now }));
  if (settled.length > 0) await options.onSettled?.(trx, settled);
  const live = due.flatMap((d) => (d.webhookId === null ? [] : [{ ...d, webhookId: d.webhookId }]));
  const webhookIds = [...new Set(live.map((d) => d.webhookId))];
  if (webhookIds.length === 0) return [];
  const webhooks = await lockClaimableWebhooks(trx, capabilities, webhookIds);
  const counted = await countedSends(trx, webhookIds, rateWindowStart(now));
  const plan = planClaims(live, webhooks, counted, now, options.leaseMarginMs);

  const byId = new Map(live.map((d) => [d.id, d]));
  const writes: ClaimWrite[] = [];
  const claimed: ClaimedDelivery[] = [];
  for (const decision of plan.decisions) {
    const d = byId.get(decision.id);
    if (!d) continue;
    if (decision.kind === 'defer') {
      writes.push({ id: d.id, dueAt: decision.dueAt, leaseOwner: null, url: d.url, method: d.method });
      continue;
    }
    const webhook = webhooks.get(decision.webhookId);
    if (!webhook) continue;
    const { enabled: _enabled, ...target } = webhook;
    writes.push({
      id: d.id,
      dueAt: decision.leaseUntil,
      leaseOwner: workerId,
      url: target.url,
      method: target.method,
    });
    claimed.push({
      id: d.id,
      workspaceId: d.workspaceId,
      origin: d.origin,
      eventType: d.eventType,
      eventId: d.eventId,
      idempotencyKey: d.idempotencyKey,
      payload: d.payload,
      // attempt_count moves only when an outcome is recorded: a lease that runs out repeats it.
      attempt: d.attemptCount + 1,
      leaseUntil: decision.leaseUntil,
      webhook: target,
    });
  }
  await writeClaims(trx, capabilities, writes);
  await countSends(trx, plan.second, plan.sends);
  return claimed;
}
