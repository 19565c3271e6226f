/** Examples of /subscriptions: plans, the current subscription, usage and invoices (contract §7). */
import type { OperationExamples } from './operation-example.ts';
import { invoice, listOf, plans, subscription, usage } from './records.ts';

export const billingExamples: OperationExamples = {
  'GET /api/v1/subscriptions/plans': { responses: { 200: listOf(...plans) } },
  'GET /api/v1/subscriptions/current': { responses: { 200: subscription } },
  'PUT /api/v1/subscriptions/current': { request: { plan: 'pro' }, responses: { 200: subscription } },
  'GET /api/v1/subscriptions/usage': { responses: { 200: usage } },
  'GET /api/v1/subscriptions/invoices': { responses: { 200: listOf(invoice) } },
};
