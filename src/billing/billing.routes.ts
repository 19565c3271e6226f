/**
 * /subscriptions (contract §7): the plan table, the workspace's current plan and plan changes,
 * usage against the limits, and invoices of closed periods.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/route-auth.ts';
import type { Db } from '../db/database.ts';
import { errorResponses, ListOf, PaginationQuery, page } from '../http/schemas.ts';
import type { Clock } from '../shared/clock.ts';
import {
  changePlanBody,
  InvoiceSchema,
  invoiceOut,
  PlanSchema,
  SubscriptionSchema,
  subscriptionOut,
  UsageSchema,
} from './billing.schemas.ts';
import type { Billing } from './billing.ts';
import { listInvoices } from './invoices.repository.ts';
import { periodOf } from './period.ts';
import { usageReport } from './usage.service.ts';

const tags = ['subscriptions'];
const read = { auth: { scope: 'subscriptions:read' as const } };
const write = { auth: { scope: 'subscriptions:write' as const, adminOnly: true } };

export async function billingRoutes(
  fastify: FastifyInstance,
  ctx: Pick<Billing, 'catalog' | 'subscriptions' | 'meter' | 'apiKeyWindows'> & { db: Db; clock: Clock },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/subscriptions/plans',
    {
      config: read,
      schema: {
        operationId: 'listPlans',
        tags,
        summary: 'The plans and their limits',
        querystring: PaginationQuery,
        response: { 200: ListOf(PlanSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50 } = request.query;
      const plans = ctx.catalog.plans;
      return page(plans.slice(offset, offset + limit), plans.length, offset, limit);
    },
  );

  app.get(
    '/subscriptions/current',
    {
      config: read,
      schema: {
        operationId: 'getSubscription',
        tags,
        summary: "The workspace's plan and current period (calendar month, UTC)",
        response: { 200: SubscriptionSchema, ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const subscription = await ctx.subscriptions.current(principalOf(request).workspaceId);
      return subscriptionOut(subscription, periodOf(ctx.clock.now()));
    },
  );

  app.put(
    '/subscriptions/current',
    {
      config: write,
      schema: {
        operationId: 'changePlan',
        tags,
        summary: 'Change the plan (owner/admin); takes effect at once on every node',
        description:
          'Only plans open to self-service (`self_service: true` in GET /subscriptions/plans: free, pro and business by default) can be chosen here; any other plan, enterprise always, answers 403 INSUFFICIENT_PERMISSIONS asking to contact us, and an operator assigns it. Limits and quota states are re-read at once; a workspace blocked or throttled by its event quota is released if the new quota allows it. Operator-set custom limits are cleared.',
        body: changePlanBody(ctx.catalog.plans.map((p) => p.id)),
        response: { 200: SubscriptionSchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const subscription = await ctx.subscriptions.changeBySelfService(
        principalOf(request).workspaceId,
        request.body.plan,
      );
      return subscriptionOut(subscription, periodOf(ctx.clock.now()));
    },
  );

  app.get(
    '/subscriptions/usage',
    {
      config: read,
      schema: {
        operationId: 'getUsage',
        tags,
        summary: 'Usage of this period against the plan limits, with a daily series',
        description:
          'Events are this period’s geofence events (the quota basis). `daily.api_requests` counts API-key requests; other nodes’ counts appear within about 10 s (they are flushed periodically).',
        response: { 200: UsageSchema, ...errorResponses(401, 403) },
      },
    },
    async (request) => usageReport(ctx, principalOf(request).workspaceId),
  );

  app.get(
    '/subscriptions/invoices',
    {
      config: read,
      schema: {
        operationId: 'listInvoices',
        tags,
        summary: 'Invoices of closed periods, newest first (computed, not charged)',
        querystring: PaginationQuery,
        response: { 200: ListOf(InvoiceSchema), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const { offset = 0, limit = 50 } = request.query;
      const result = await listInvoices(ctx.db, principalOf(request).workspaceId, offset, limit);
      return page(result.invoices.map(invoiceOut), result.total, offset, limit);
    },
  );
}
