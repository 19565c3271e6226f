/** Examples of /subscriptions: plans, the current subscription, usage and invoices (contract §7). */
import type { OperationExamples } from '../http/examples/operation-example.ts';
import { ids, listOf } from '../http/examples/records.ts';
import { DEFAULT_PLANS } from './plans.ts';

const freePlan = DEFAULT_PLANS[0];

const subscription = {
  plan: 'pro',
  status: 'active',
  current_period_start: '2026-03-01T00:00:00.000Z',
  current_period_end: '2026-04-01T00:00:00.000Z',
  limits: DEFAULT_PLANS[1]?.limits ?? freePlan?.limits,
};

const usage = {
  period_start: '2026-03-01T00:00:00.000Z',
  period_end: '2026-04-01T00:00:00.000Z',
  events: { used: 8000, quota: 10000, percent: 80 },
  api_requests: { used_this_hour: 42, limit: 100 },
  geofences: { count: 12, limit: 50 },
  webhooks: { count: 1, limit: 5 },
  devices: { count: 30, limit: 100 },
  daily: [{ date: '2026-03-10', events: 420, api_requests: 1380 }],
};

const invoice = {
  id: ids.invoice,
  period_start: '2026-02-01T00:00:00.000Z',
  period_end: '2026-03-01T00:00:00.000Z',
  plan: 'pro',
  amount_cents: 5_000,
  line_items: [
    {
      kind: 'subscription',
      description: 'Pro plan, 2026-02',
      quantity: 1,
      unit_amount_cents: 4_900,
      amount_cents: 4_900,
    },
    {
      kind: 'event_overage',
      description: '1500 events over the 250000 included (2 × 1,000 events)',
      quantity: 2,
      unit_amount_cents: 50,
      amount_cents: 100,
    },
  ],
  status: 'open',
};

export const billingExamples: OperationExamples = {
  'GET /api/v1/subscriptions/plans': { responses: { 200: listOf(...DEFAULT_PLANS) } },
  'GET /api/v1/subscriptions/current': { responses: { 200: subscription } },
  'PUT /api/v1/subscriptions/current': { request: { plan: 'pro' }, responses: { 200: subscription } },
  'GET /api/v1/subscriptions/usage': { responses: { 200: usage } },
  'GET /api/v1/subscriptions/invoices': { responses: { 200: listOf(invoice) } },
};
