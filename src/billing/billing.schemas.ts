/** TypeBox schemas of /subscriptions (contract §7). */
import { Type } from 'typebox';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.ts';
import type { Invoice } from './invoices.repository.ts';
import type { BillingPeriod } from './period.ts';
import type { Plan } from './plans.ts';
import type { Subscription } from './subscriptions.service.ts';

const Limit = (description: string) =>
  Nullable(Type.Integer({ minimum: 0, description: `${description}; null = no limit` }));

export const LimitsSchema = Type.Object({
  api_requests_per_hour: Limit('API-key requests per key per rolling hour'),
  events_per_month: Limit('Geofence events per calendar month (UTC)'),
  geofences: Limit('Geofences per workspace'),
  webhooks: Limit('Webhooks per workspace'),
  devices: Limit('Devices per workspace'),
});

export const PlanSchema = Type.Object({
  id: Type.String({ description: 'free, pro, business, enterprise (or the ids of PLANS_FILE)' }),
  name: Type.String(),
  price_cents_per_month: Nullable(Type.Integer({ minimum: 0, description: 'null: priced per contract' })),
  limits: LimitsSchema,
  overage_cents_per_1000_events: Nullable(
    Type.Integer({
      minimum: 0,
      description: 'Price of every started 1,000 events beyond events_per_month; null = overage not billed',
    }),
  ),
  self_service: Type.Boolean({
    description:
      'Whether an owner or admin can switch to this plan with PUT /subscriptions/current; otherwise (enterprise) an operator assigns it',
  }),
});

export const SubscriptionSchema = Type.Object({
  plan: Type.String(),
  status: StringEnum(['active'] as const),
  current_period_start: Timestamp,
  current_period_end: Timestamp,
  limits: LimitsSchema,
});

export function changePlanBody(planIds: readonly string[]) {
  return Type.Object({ plan: StringEnum(planIds as [string, ...string[]]) }, { additionalProperties: false });
}

const Usage = (field: string) =>
  Type.Object({
    count: Type.Integer(),
    limit: Nullable(Type.Integer({ description: `${field}; null = no limit` })),
  });

export const UsageSchema = Type.Object({
  period_start: Timestamp,
  period_end: Timestamp,
  events: Type.Object({
    used: Type.Integer(),
    quota: Nullable(Type.Integer()),
    percent: Nullable(Type.Number({ description: 'used / quota × 100, two decimals' })),
  }),
  api_requests: Type.Object({
    used_this_hour: Type.Integer({ description: "Requests of the workspace's API keys in the rolling hour" }),
    limit: Nullable(Type.Integer({ description: 'Per key per rolling hour' })),
  }),
  geofences: Usage('geofences'),
  webhooks: Usage('webhooks'),
  devices: Usage('devices'),
  daily: Type.Array(
    Type.Object({
      date: Type.String({ format: 'date' }),
      events: Type.Integer(),
      api_requests: Type.Integer({ description: 'API-key requests (JWT requests are not counted)' }),
    }),
  ),
});

export const LineItemSchema = Type.Object({
  kind: StringEnum(['subscription', 'event_overage'] as const),
  description: Type.String(),
  quantity: Type.Integer(),
  unit_amount_cents: Type.Integer(),
  amount_cents: Type.Integer(),
});

export const InvoiceSchema = Type.Object({
  id: Type.String(),
  period_start: Timestamp,
  period_end: Timestamp,
  plan: Type.String(),
  amount_cents: Type.Integer(),
  line_items: Type.Array(LineItemSchema),
  status: StringEnum(['open'] as const, {
    description: 'Computed, not charged: there is no payment provider',
  }),
});

export const planOut = (plan: Plan) => plan;

export function subscriptionOut(subscription: Subscription, period: BillingPeriod) {
  return {
    plan: subscription.plan.id,
    status: 'active' as const,
    current_period_start: period.start.toISOString(),
    current_period_end: period.end.toISOString(),
    limits: subscription.limits,
  };
}

export function invoiceOut(invoice: Invoice) {
  return {
    id: invoice.id,
    period_start: invoice.periodStart.toISOString(),
    period_end: invoice.periodEnd.toISOString(),
    plan: invoice.plan,
    amount_cents: invoice.amountCents,
    line_items: invoice.lineItems,
    status: invoice.status as 'open',
  };
}
