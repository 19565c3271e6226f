/**
 * Invoices (contract §7): computed for each closed period, never charged (no payment provider).
 * Amount = the monthly price of the plan in force at the end of the period (no proration) plus
 * event overage: every started 1,000 events beyond `events_per_month` at the plan's
 * `overage_cents_per_1000_events` (docs/decisions/011). Issued by a periodic job on every node;
 * the unique (workspace, period) row makes that safe.
 */
import type { Db } from '../db/database.ts';
import type { Clock } from '../shared/clock.ts';
import { uuidv7 } from '../shared/ids.ts';
import { eventUsage } from '../usage/usage.repository.ts';
import {
  type Invoice,
  insertInvoiceIfAbsent,
  type LineItem,
  workspacesWithoutInvoice,
} from './invoices.repository.ts';
import { type BillingPeriod, previousPeriod } from './period.ts';
import type { Subscription, Subscriptions } from './subscriptions.service.ts';

const BATCH = 200;

export function invoiceLines(
  subscription: Subscription,
  period: BillingPeriod,
  eventsUsed: number,
): { lineItems: LineItem[]; amountCents: number } {
  const { plan, limits, priceCents } = subscription;
  const lineItems: LineItem[] = [
    {
      kind: 'subscription',
      description: `${plan.name} plan, ${period.id}`,
      quantity: 1,
      unit_amount_cents: priceCents,
      amount_cents: priceCents,
    },
  ];
  const quota = limits.events_per_month;
  const overagePrice = plan.overage_cents_per_1000_events;
  if (quota !== null && overagePrice !== null && eventsUsed > quota) {
    const over = eventsUsed - quota;
    const units = Math.ceil(over / 1000);
    lineItems.push({
      kind: 'event_overage',
      description: `${over} events over the ${quota} included (${units} × 1,000 events)`,
      quantity: units,
      unit_amount_cents: overagePrice,
      amount_cents: units * overagePrice,
    });
  }
  return { lineItems, amountCents: lineItems.reduce((sum, item) => sum + item.amount_cents, 0) };
}

export async function invoiceFor(
  ctx: { db: Db; subscriptions: Subscriptions; clock: Clock },
  workspaceId: string,
  period: BillingPeriod,
): Promise<Invoice> {
  // The subscription in force at the last instant of the period.
  const subscription = await ctx.subscriptions.at(ctx.db, workspaceId, new Date(period.end.getTime() - 1));
  const used = await eventUsage(ctx.db, workspaceId, period.id);
  const { lineItems, amountCents } = invoiceLines(subscription, period, used);
  return {
    id: uuidv7(),
    workspaceId,
    period: period.id,
    periodStart: period.start,
    periodEnd: period.end,
    plan: subscription.plan.id,
    amountCents,
    lineItems,
    status: 'open',
    createdAt: ctx.clock.now(),
  };
}

/** Issues the last closed period's missing invoices; returns how many this run issued. */
export async function issueInvoices(ctx: {
  db: Db;
  subscriptions: Subscriptions;
  clock: Clock;
}): Promise<number> {
  const period = previousPeriod(ctx.clock.now());
  let issued = 0;
  for (;;) {
    const workspaces = await workspacesWithoutInvoice(ctx.db, period.id, period.end, BATCH);
    if (workspaces.length === 0) return issued;
    for (const workspaceId of workspaces) {
      if (await insertInvoiceIfAbsent(ctx.db, await invoiceFor(ctx, workspaceId, period))) issued++;
    }
  }
}
