/** `cli set-plan` (contract §0): an operator switches a workspace's plan, with custom limits. */

import { subscriptionOut } from './billing.schemas.ts';
import type { Billing } from './billing.ts';
import { periodOf } from './period.ts';
import type { LimitName } from './plans.ts';
import type { CustomLimits } from './subscriptions.repository.ts';

const FLAG_LIMITS: Record<string, LimitName> = {
  'api-requests-per-hour': 'api_requests_per_hour',
  'events-per-month': 'events_per_month',
  geofences: 'geofences',
  webhooks: 'webhooks',
  devices: 'devices',
};

function count(flag: string, value: string): number | null | string {
  if (value === 'unlimited' || value === 'none') return null;
  const n = Number(value.replaceAll('_', ''));
  return Number.isInteger(n) && n >= 0
    ? n
    : `--${flag} must be an integer ≥ 0 or "unlimited", got "${value}"`;
}

export function customLimitsFromFlags(
  flags: Record<string, string | undefined>,
): { limits: CustomLimits; priceCents: number | null } | { problem: string } {
  const limits: CustomLimits = {};
  for (const [flag, name] of Object.entries(FLAG_LIMITS)) {
    const raw = flags[flag];
    if (raw === undefined) continue;
    const value = count(flag, raw);
    if (typeof value === 'string') return { problem: value };
    limits[name] = value;
  }
  let priceCents: number | null = null;
  if (flags['price-cents'] !== undefined) {
    const value = count('price-cents', flags['price-cents']);
    if (typeof value === 'string') return { problem: value };
    priceCents = value;
  }
  return { limits, priceCents };
}

export async function setPlan(
  billing: Billing,
  workspaceId: string,
  planId: string,
  custom: { limits: CustomLimits; priceCents: number | null },
): Promise<unknown> {
  const subscription = await billing.subscriptions.change(workspaceId, planId, custom);
  return {
    workspace_id: workspaceId,
    ...subscriptionOut(subscription, periodOf(new Date())),
    price_cents_per_month: subscription.priceCents,
    custom_limits: subscription.customLimits,
  };
}
